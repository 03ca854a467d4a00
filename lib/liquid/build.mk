# lib/liquid/build.mk - fields in and out (liq_h5.c, liq_png.c): the serial
# HDF5 library and libpng.  Their include paths go to the folders that
# include liq_io.h; the libraries join LDLIBS, which links vmrun, the unit
# tests and the benchmarks, but not libpvm3.so, which keeps the LDLIBS it
# had before (it holds no libliquid code).  Debian's serial HDF5 is
# pkg-config `hdf5` (or `hdf5-serial`); without either, its fixed paths.
DEB_PKGS += libhdf5-dev hdf5-tools libpng-dev

LIQ_H5_PC  := $(firstword $(foreach p,hdf5 hdf5-serial,$(shell pkg-config --exists $(p) 2>/dev/null && echo $(p))))
ifneq ($(LIQ_H5_PC),)
LIQ_IO_INC  := $(patsubst -I%,%,$(shell pkg-config --cflags-only-I $(LIQ_H5_PC) libpng))
LIQ_IO_LIBS := $(shell pkg-config --libs $(LIQ_H5_PC) libpng)
else
LIQ_IO_INC  := /usr/include/hdf5/serial $(patsubst -I%,%,$(shell pkg-config --cflags-only-I libpng 2>/dev/null))
LIQ_IO_LIBS := -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5_serial -lpng
endif

INC_lib/liquid     += $(LIQ_IO_INC)
INC_launcher/vmrun += $(LIQ_IO_INC)
INC_tests/unit     += $(LIQ_IO_INC)
INC_bench          += $(LIQ_IO_INC)

$(LIBPVM_SO): LDLIBS := $(LDLIBS)
LDLIBS += $(LIQ_IO_LIBS)
