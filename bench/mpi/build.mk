# bench/mpi/build.mk - bench/mpi/mpi_pingpong, PVM's timing protocol over
# MPI for bench/pvm_timing.sh, built only where mpicc is installed (Debian:
# openmpi-bin libopenmpi-dev).  A folder of its own, so that the main
# build's glob of bench/*.c never compiles it without MPI.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
BENCH_MPI := $(if $(MPICC),$(O)/bench/mpi_pingpong)

all: $(BENCH_MPI)

$(O)/bench/mpi_pingpong: bench/mpi/mpi_pingpong.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $@")
	$(Q)$(MPICC) -O2 -g -std=c11 -Wall -Wextra -Werror -o $@ $<
