# bench/build.mk - the PVM benchmark links libpvm3, and is built a second
# time from the same source against real PVM 3.4.6 (its /usr/include/pvm3.h
# and -lpvm3) when that is installed, for bench/pvm_timing.sh.
BENCH_PVM_REAL := $(if $(wildcard /usr/include/pvm3.h),$(O)/bench/pvm_timing_pvm)

$(O)/bench/pvm_timing: $(O)/bench/pvm_timing.o $(LIBPVM_SO)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(O)/lib -lpvm3 -Wl,-rpath,'$$ORIGIN/../lib'

# Not -Ilib/pvm: "pvm3.h" must be real PVM's.
$(O)/bench/pvm_timing_pvm: bench/pvm_timing.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@ (real PVM 3.4.6)")
	$(Q)$(CC) -O2 -g -std=c11 -D_GNU_SOURCE $(WARN) '-DPVM_TIMING_IMPL="PVM 3.4.6"' \
	    -o $@ $< -lpvm3

# The Mandelbrot bands for GNU parallel: -O3, as examples/mandelbrot.
$(O)/bench/mandel_rows.o: CFLAGS += -O3
