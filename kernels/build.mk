# kernels/build.mk - flags for the stencil kernels and their benchmark.
#
# -O3 lets gcc and clang vectorise the plain loops (the reference and the
# tiled kernels); the fast paths choose AVX2 at run time (kern_row.c), so no
# -march flag: one build runs on every x86-64 host.  -ffp-contract=off comes
# from the top Makefile and must stay: bit-identical results need it.
KERN_CFLAGS  := -O3
BENCH_CFLAGS := -O3
