# LiquidVM: one Makefile for the whole tree (STYLE.md 5.9).
#
#   make            build vmd, vmctl, the libraries, tests and benchmarks into build/
#   make check      build twice (plain and ASan+UBSan) and run every test
#   make demo       start a local VM of several daemons and run the demo job
#   make deps       install the Debian packages the build needs (as root)
#   make install    PREFIX=/usr/local DESTDIR=
#   V=1             show full commands
#
# Sources are found by globbing each folder, so a new file or test is
# registered nowhere else.  A folder may add flags in its own build.mk.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
O       ?= build
SAN     ?=

PKGS      := libuv openssl libconfig
DEB_PKGS  := build-essential pkg-config libuv1-dev libssl-dev libconfig-dev \
             libcmocka-dev libedit-dev openssl iproute2 procps python3 strace pvm pvm-dev pvm-examples
VERSION   := 0.1.0

WARN := -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes -Wshadow \
        -Wpointer-arith -Wcast-qual -Wsign-compare
# -ffp-contract=off: results must be bit-identical on every host and in every
# decomposition (docs/architecture.md, the invariant), so no FMA contraction.
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -DLIQUIDVM_VERSION='"$(VERSION)"' -fPIC -ffp-contract=off $(WARN) -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) libedit 2>/dev/null)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
ifneq ($(SAN),)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Per-folder sources.
WIRE_SRC   := $(wildcard lib/wire/*.c)
CONF_SRC   := $(wildcard conf/*.c)
KERN_SRC   := $(wildcard kernels/*.c)
DECOMP_SRC := $(wildcard decomp/*.c)
VMD_SRC    := $(filter-out daemon/vmd_main.c,$(wildcard daemon/*.c))
VMCTL_SRC  := $(filter-out launcher/vmctl/vmctl_main.c,$(wildcard launcher/vmctl/*.c))
VMRUN_SRC  := $(filter-out launcher/vmrun/vmrun_main.c,$(wildcard launcher/vmrun/*.c))
LIQ_SRC    := $(wildcard lib/liquid/*.c)
PVM_SRC    := $(filter-out lib/pvm/pvm_fortran%.c,$(wildcard lib/pvm/*.c))
TEST_SRC   := $(wildcard tests/unit/test_*.c)
BENCH_SRC  := $(wildcard bench/*.c)
PVMPROG_SRC:= $(wildcard tests/integ/*.c)

# The dependency table (docs/architecture.md): each folder's include path
# names only itself and the folders it may depend on, so a header from any
# other folder does not compile.  Tests and benchmarks see everything.
INC_lib/wire        := lib/wire
INC_lib/pvm         := lib/pvm lib/wire
INC_lib/liquid      := lib/liquid lib/pvm lib/wire kernels decomp conf
INC_daemon          := daemon lib/wire conf
INC_conf            := conf lib/wire
INC_launcher/vmctl  := launcher/vmctl lib/wire conf
INC_launcher/vmrun  := launcher/vmrun lib/liquid lib/pvm lib/wire decomp kernels
INC_decomp          := decomp
INC_kernels         := kernels
INC_ALL             := lib/wire lib/pvm lib/liquid daemon conf launcher/vmctl launcher/vmrun \
                       decomp kernels
INC_tests/unit      := $(INC_ALL)
INC_bench           := $(INC_ALL)
INC_bench/groups    := $(INC_ALL)
INC_tests/integ     := lib/pvm
inc = $(addprefix -I,$(or $(INC_$(patsubst %/,%,$(dir $(1)))),$(error no include path for $(1))))

# Folder-specific flags (e.g. KERN_CFLAGS) live beside the code.
-include kernels/build.mk decomp/build.mk
.DEFAULT_GOAL := all

obj = $(patsubst %.c,$(O)/%.o,$(1))

LIBWIRE   := $(O)/libwire.a
LIBCONF   := $(O)/libconf.a
LIBKERN   := $(O)/libkern.a
LIBDECOMP := $(O)/libdecomp.a
LIBVMD    := $(O)/libvmd.a
LIBVMCTL  := $(O)/libvmctl.a
LIBVMRUN  := $(O)/libvmrun.a
LIBLIQ    := $(O)/libliquid.a
LIBPVM_A  := $(O)/lib/libpvm3.a
# Unit tests and benchmarks link everything; libliquid and vmrun need libpvm3.
ARCHIVES  := $(LIBVMD) $(LIBVMCTL) $(LIBVMRUN) $(LIBLIQ) $(LIBPVM_A) $(LIBWIRE) $(LIBCONF) \
             $(LIBDECOMP) $(LIBKERN)

LIBPVM_SO := $(O)/lib/libpvm3.so.3
LIBGPVM_SO := $(O)/lib/libgpvm3.so.3
LIBGPVM_A  := $(O)/lib/libgpvm3.a

VMD    := $(O)/bin/vmd
VMCTL  := $(O)/bin/vmctl
VMRUN  := $(O)/bin/vmrun
TESTS  := $(patsubst tests/unit/%.c,$(O)/tests/%,$(TEST_SRC))
BENCHES:= $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))
# PVM programs for the integration tests, built against our pvm3.h and libpvm3.so.3.
PVMPROGS := $(patsubst tests/integ/%.c,$(O)/tests/integ/%,$(PVMPROG_SRC))

# A folder's own targets, flags and packages live in its build.mk (bench/,
# lib/*/, launcher/*/, examples/...), included once the names above are set:
# one may add to all (`all: $(X)`), install (`install: install-x`),
# DEB_PKGS and its folder's INC_ path.
-include $(filter-out kernels/build.mk decomp/build.mk,$(sort $(wildcard */build.mk */*/build.mk)))

.PHONY: all check cycles unit integ demo deps install clean bench
all: $(VMD) $(VMCTL) $(VMRUN) $(if $(PVM_SRC),$(LIBPVM_SO) $(LIBPVM_A) $(LIBGPVM_SO) $(LIBGPVM_A) \
     $(PVMPROGS)) $(TESTS) $(BENCHES) $(BENCH_PVM_REAL)

$(O)/kernels/%.o: CFLAGS += $(KERN_CFLAGS)
# libpvm3 exports PVM's names only (STYLE.md 5.2): hidden by default,
# the API marked visible in pvm3.h.
$(O)/lib/pvm/%.o: CFLAGS += -fvisibility=hidden
$(O)/decomp/%.o: CFLAGS += $(DECOMP_CFLAGS)
$(O)/bench/%.o: CFLAGS += $(BENCH_CFLAGS)

# Objects that only a pattern rule names (a program of examples/, tests/ or
# bench/ from its one .o) are intermediate to make, which deletes them
# after a first build; the next make (make install) then compiled them all
# again.  Keep every file made.
.SECONDARY:

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(call inc,$<) -c -o $@ $<

define archive
$(1): $(call obj,$(2))
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  AR      $$@")
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(eval $(call archive,$(LIBWIRE),$(WIRE_SRC)))
$(eval $(call archive,$(LIBCONF),$(CONF_SRC)))
$(eval $(call archive,$(LIBKERN),$(KERN_SRC)))
$(eval $(call archive,$(LIBDECOMP),$(DECOMP_SRC)))
$(eval $(call archive,$(LIBVMD),$(VMD_SRC)))
$(eval $(call archive,$(LIBVMCTL),$(VMCTL_SRC)))
$(eval $(call archive,$(LIBVMRUN),$(VMRUN_SRC)))
$(eval $(call archive,$(LIBLIQ),$(LIQ_SRC)))

# libpvm3: the PVM 3.4 API, with the wire format and logging inside it.
$(LIBPVM_SO): $(call obj,$(PVM_SRC) $(WIRE_SRC)) lib/pvm/libpvm3.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libpvm3.so.3 -Wl,--version-script=lib/pvm/libpvm3.map \
	    -o $@ $(filter %.o,$^) $(LDLIBS)
	$(Q)ln -sf libpvm3.so.3 $(O)/lib/libpvm3.so

$(LIBPVM_A): $(call obj,$(PVM_SRC) $(WIRE_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# libgpvm3: PVM's group library.  Group programs link with -lgpvm3 -lpvm3
# and PVM's binaries name libgpvm3.so.3, so both must resolve; but our group
# calls live in libpvm3 itself (they use the task's one library context and
# its link to the daemon, both internal), so libgpvm3 holds no code: the
# shared one only names libpvm3.so.3 as needed, the archive is empty and
# -lpvm3, which follows it on PVM's link line, supplies the calls.
$(LIBGPVM_SO): $(LIBPVM_SO)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libgpvm3.so.3 -Wl,--no-as-needed -o $@ \
	    -L$(O)/lib -lpvm3
	$(Q)ln -sf libgpvm3.so.3 $(O)/lib/libgpvm3.so

$(LIBGPVM_A):
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rc $@

$(VMD): $(O)/daemon/vmd_main.o $(LIBVMD) $(LIBWIRE) $(LIBCONF)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(VMCTL): $(O)/launcher/vmctl/vmctl_main.o $(LIBVMCTL) $(LIBWIRE) $(LIBCONF)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs libedit 2>/dev/null)

# vmrun is a PVM task (and its own workers, spawned as `vmrun worker`):
# libliquid's master and worker, linked in from the archives so that the
# one file runs wherever it is copied (its HDF5 and PNG files need the
# module beside it, ../lib/liquid/, or LIQUIDVM_IO_MODULE; lib/liquid/build.mk
# builds the same objects as libliquid.so for users' programs).
$(VMRUN): $(O)/launcher/vmrun/vmrun_main.o $(LIBVMRUN) $(LIBLIQ) $(LIBPVM_A) $(LIBCONF) \
          $(LIBDECOMP) $(LIBKERN)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(ARCHIVES) $(LDLIBS) $(shell pkg-config --libs cmocka libedit 2>/dev/null)

$(O)/tests/integ/%: $(O)/tests/integ/%.o $(LIBPVM_SO)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(O)/lib -lpvm3 -Wl,-rpath,'$$ORIGIN/../../lib'

$(O)/bench/%: $(O)/bench/%.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(ARCHIVES) $(LDLIBS)

# make check: the plain build and its call graph (no file-level call circle:
# none larger than CYCLES_MAX files, and 1 means none), every fuzz harness
# over its corpus (tests/fuzz/build.mk), then the sanitizer build in its own
# directory; unit tests run in both, integration tests against the
# sanitizer daemons too.
# The three builds use every CPU (JOBS); the tests run one at a time.
CYCLES_MAX ?= 1
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check:
	$(MAKE) -j$(JOBS) all
	tests/tools/callcycles.py --max $(CYCLES_MAX) $(O)
	$(MAKE) -j$(JOBS) fuzz-check
	$(MAKE) -j$(JOBS) O=build/san SAN=1 all
	tests/run.sh build build/san

cycles: all
	tests/tools/callcycles.py --max $(CYCLES_MAX) $(O)

unit: all
	tests/run.sh --unit-only build

integ: all
	tests/run.sh --integ-only build

# A benchmark with a driver (bench/NAME.sh) runs through it.  bench/liquid.sh
# (issue 8's multi-user scenario) runs bench/liquid_bound itself; 77 is its skip,
# as for bench/paradise.sh (issue 27: hints against a sweep, root and cgroups).
# bench/liquid_failures.sh (issue 26: failures at random times) takes 6-12 min.
bench: all
	@for b in $(BENCHES); do [ "$$(basename $$b)" = liquid_bound ] && continue; echo "== $$b"; \
	    if [ -x bench/$$(basename $$b).sh ]; then bench/$$(basename $$b).sh || exit 1; \
	    else $$b || exit 1; fi; done
	@echo "== bench/liquid.sh"; bench/liquid.sh; rc=$$?; [ $$rc = 0 ] || [ $$rc = 77 ] || exit 1
	@echo "== bench/paradise.sh"; bench/paradise.sh; rc=$$?; [ $$rc = 0 ] || [ $$rc = 77 ] || exit 1
	@echo "== bench/liquid_failures.sh"; bench/liquid_failures.sh || exit 1

# Recursive, so that `make deps demo` on a fresh machine builds with the
# flags pkg-config gives once deps has installed the packages.
demo:
	$(MAKE) all
	tests/demo.sh $(O)

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: run as root:  apt-get install$$missing"; exit 1; fi

# Installs like PVM's packages: the shared libraries with their -l
# development links, the archives, the headers (pvm3.h and LiquidVM's two
# lvm_ extensions), pkg-config files for libpvm3 and libgpvm3, and a man
# page for every program, library call and configuration file.
PVM_HEADERS := lib/pvm/pvm3.h lib/pvm/lvm_load.h lib/pvm/lvm_err.h
pcfile = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $(1) > $(2)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/liquidvm $(addprefix $(DESTDIR)$(PREFIX)/share/man/man,1 3 5)
	install -m 755 $(VMD) $(VMCTL) $(VMRUN) $(DESTDIR)$(PREFIX)/bin/
	for s in 1 3 5; do for f in man/*.$$s; do [ -f "$$f" ] || continue; \
	    install -m 644 "$$f" $(DESTDIR)$(PREFIX)/share/man/man$$s/ || exit 1; done; done
	install -m 644 conf/vmd.conf $(DESTDIR)$(PREFIX)/share/liquidvm/
	install -m 755 $(LIBPVM_SO) $(LIBGPVM_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libpvm3.so.3 $(DESTDIR)$(PREFIX)/lib/libpvm3.so
	ln -sf libgpvm3.so.3 $(DESTDIR)$(PREFIX)/lib/libgpvm3.so
	install -m 644 $(LIBPVM_A) $(LIBGPVM_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(PVM_HEADERS) $(DESTDIR)$(PREFIX)/include/
	$(call pcfile,lib/pvm/libpvm3.pc.in,$(DESTDIR)$(PREFIX)/lib/pkgconfig/libpvm3.pc)
	$(call pcfile,lib/pvm/libgpvm3.pc.in,$(DESTDIR)$(PREFIX)/lib/pkgconfig/libgpvm3.pc)

clean:
	rm -rf build

-include $(shell find $(O) -name '*.d' 2>/dev/null)
