# examples/build.mk - programs written against liquid.h alone, each the
# master and the workers of its own stencil job (README: "Your own
# stencil").  Linked from the archives, as vmrun is, so that one file runs
# wherever it is copied; test_install builds one from the installed header
# and pkg-config liquid instead.
INC_examples := lib/liquid
# -O3, as kernels/ is built (KERN_CFLAGS): GCC 12's -O2 leaves heat3d's row
# loop scalar (-fopt-info-vec), and its update ran at half the speed
# (bench/liquid_user.sh, docs/performance.md).
$(O)/examples/%.o: CFLAGS += -O3

EXAMPLES := $(patsubst examples/%.c,$(O)/examples/%,$(wildcard examples/*.c))

all: $(EXAMPLES)

$(O)/examples/%: $(O)/examples/%.o $(LIBLIQ) $(LIBPVM_A) $(LIBCONF) $(LIBWIRE) $(LIBDECOMP) $(LIBKERN)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm
