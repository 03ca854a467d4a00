# tests/fuzz/: libFuzzer harnesses (issue 30), one per fuzz_<what>.c, each
# with its seed corpus in tests/fuzz/corpus/<what>/ (small, committed).
#
#   make fuzz          build, then fuzz each harness for FUZZ_SECONDS (60) at
#                      nice 19; new inputs go to $(O)/fuzz/corpus/<what>/,
#                      crashes to $(O)/fuzz/crash/<what>-*, each run's log and
#                      final stats to $(O)/fuzz/<what>.log
#   make fuzz-check    run every harness over its committed corpus only (no
#                      fuzzing time): the regression check that make check calls
#
# The harnesses and every library they reach are built apart, with clang and
# -fsanitize=fuzzer-no-link,address,undefined, into $(O)/fuzz; the rest of
# the build does not change.  A crash found becomes a file of the corpus
# (so fuzz-check replays it) and a unit test of the module.
DEB_PKGS += clang libclang-rt-14-dev

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_O       := $(O)/fuzz
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
FUZZ_BINS    := $(addprefix $(FUZZ_O)/fuzz_,$(FUZZ_NAMES))
INC_tests/fuzz := $(INC_ALL)

# No -Werror here: clang warns of things gcc does not, and the plain build
# already holds the code to -Werror.
FUZZ_CFLAGS := -O1 -g -std=c11 -D_GNU_SOURCE -DLIQUIDVM_VERSION='"$(VERSION)"' -fPIC \
               -ffp-contract=off -fno-omit-frame-pointer -Wall \
               -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
               $(shell pkg-config --cflags $(PKGS) libedit 2>/dev/null)
FUZZ_LDFLAGS := -fsanitize=fuzzer,address,undefined
FUZZ_LIB_SRC := $(WIRE_SRC) $(CONF_SRC) $(PVM_SRC) $(VMD_SRC) $(VMCTL_SRC) $(VMRUN_SRC) \
                $(LIQ_SRC) $(DECOMP_SRC) $(KERN_SRC)
FUZZ_LIB     := $(FUZZ_O)/libfuzzlvm.a
# Leaks of third-party code that are not ours to fix (see the file).
FUZZ_ENV     := LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp:print_suppressions=0

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(call inc,$<) -MMD -MP -c -o $@ $<

$(FUZZ_LIB): $(patsubst %.c,$(FUZZ_O)/obj/%.o,$(FUZZ_LIB_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_O)/fuzz_%: $(FUZZ_O)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ $(LDLIBS) \
	    $(shell pkg-config --libs libedit 2>/dev/null)

-include $(wildcard $(FUZZ_O)/obj/*/*.d $(FUZZ_O)/obj/*/*/*.d)

.PHONY: fuzz fuzz-build fuzz-check
fuzz-build: $(FUZZ_BINS)

# Each harness over its corpus, nothing else: a regression shows as a crash.
# Without clang it says so and skips, as a test without root does.
fuzz-check:
	@command -v $(FUZZ_CC) >/dev/null || \
	    { echo "  FUZZCHK skipped: $(FUZZ_CC) not found (make deps installs it)"; exit 0; }; \
	$(MAKE) -s --no-print-directory fuzz-build && \
	for n in $(FUZZ_NAMES); do \
	    printf '  FUZZCHK %s: ' "$$n"; \
	    $(FUZZ_ENV) $(FUZZ_O)/fuzz_$$n -runs=0 tests/fuzz/corpus/$$n >$(FUZZ_O)/$$n.check.log 2>&1 || \
	        { echo FAILED; tail -40 $(FUZZ_O)/$$n.check.log; exit 1; }; \
	    echo "$$(ls tests/fuzz/corpus/$$n | wc -l) inputs ok"; \
	done

fuzz: fuzz-build
	@mkdir -p $(FUZZ_O)/crash
	@failed=; for n in $(FUZZ_NAMES); do \
	    mkdir -p $(FUZZ_O)/corpus/$$n; \
	    echo "  FUZZ    $$n for $(FUZZ_SECONDS) s"; \
	    $(FUZZ_ENV) nice -n 19 $(FUZZ_O)/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_O)/crash/$$n- $(FUZZ_O)/corpus/$$n tests/fuzz/corpus/$$n \
	        >$(FUZZ_O)/$$n.log 2>&1; rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' \
	        $(FUZZ_O)/$$n.log | sed 's/^/    /'; \
	    [ $$rc = 0 ] || { echo "  FUZZ    $$n found a crash: $(FUZZ_O)/$$n.log"; failed="$$failed $$n"; }; \
	done; [ -z "$$failed" ] || { echo "  FUZZ    crashes in:$$failed (inputs in $(FUZZ_O)/crash)"; exit 1; }
