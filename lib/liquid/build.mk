# lib/liquid/build.mk - fields in and out: the calls into the serial HDF5
# library and libpng (lib/liquid/io/) make a module of their own,
# liquid_io.so, that liq_io.c loads the first time a job reads or writes a
# file.  Nothing else links those libraries, so vmrun, the examples and
# libliquid.so.0 (and every worker they start) load neither HDF5 nor the
# thirty libraries it names.  The unit tests and the benchmarks link the
# module's objects in, as they link everything.  Debian's serial HDF5 is
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

LIQ_IO_MOD := $(O)/lib/liquid/liquid_io.so
LIQ_IO_OBJ := $(call obj,$(wildcard lib/liquid/io/*.c))

INC_lib/liquid/io := lib/liquid $(LIQ_IO_INC)
INC_tests/unit    += $(LIQ_IO_INC)

$(O)/lib/liquid/io/%.o: CFLAGS += -fvisibility=hidden
# Where make install puts the module, the last place liq_io.c looks.
$(O)/lib/liquid/liq_io.o: CFLAGS += -DLIQ_IO_LIBDIR='"$(PREFIX)/lib/liquid"'

all: $(LIQ_IO_MOD)

$(LIQ_IO_MOD): $(LIQ_IO_OBJ) lib/liquid/io/liquid_io.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,--version-script=lib/liquid/io/liquid_io.map \
	    -Wl,--no-undefined -o $@ $(LIQ_IO_OBJ) $(LIQ_IO_LIBS)

# private: a target-specific variable reaches the target's prerequisites
# too, and bench/pvm_timing's is libpvm3.so.
$(TESTS) $(BENCHES): $(LIQ_IO_OBJ)
$(TESTS) $(BENCHES): private LDLIBS += $(LIQ_IO_OBJ) $(LIQ_IO_LIBS)

# libliquid.so.0: the liquid runtime for users' own programs (issue 25),
# the job master (liq_master.h) and the worker (liq.h) with the kernels/
# and decomp/ objects they run and the conf/ and lib/wire/ pieces they
# use (job files, JSON strings), taken from the archives as needed.  It
# names libpvm3.so.3, found beside it ($ORIGIN), as needed; it exports
# the liq_ and liquid_ names only (libliquid.map).  vmrun links the same
# objects statically (the top Makefile).
LIBLIQ_SO      := $(O)/lib/libliquid.so.0
LIBLIQ_SO_OBJ  := $(call obj,$(LIQ_SRC) $(KERN_SRC) $(DECOMP_SRC))
LIBLIQ_SO_LIBS := -L$(O)/lib -lpvm3 $(shell pkg-config --libs libconfig 2>/dev/null) -lm

all: $(LIBLIQ_SO)

$(LIBLIQ_SO): $(LIBLIQ_SO_OBJ) $(LIBCONF) $(LIBWIRE) lib/liquid/libliquid.map $(LIBPVM_SO)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libliquid.so.0 -Wl,--version-script=lib/liquid/libliquid.map \
	    -Wl,--no-undefined -Wl,-rpath,'$$ORIGIN' -o $@ $(LIBLIQ_SO_OBJ) $(LIBCONF) $(LIBWIRE) \
	    $(LIBLIQ_SO_LIBS)
	$(Q)ln -sf libliquid.so.0 $(O)/lib/libliquid.so

# Installed with its development link, pkg-config file `liquid`, the public
# header liquid.h (liq_master.h stays internal) and the I/O module in
# lib/liquid/.
.PHONY: install-liquid
install: install-liquid
install-liquid: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/lib/liquid
	install -m 755 $(LIBLIQ_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIQ_IO_MOD) $(DESTDIR)$(PREFIX)/lib/liquid/
	ln -sf libliquid.so.0 $(DESTDIR)$(PREFIX)/lib/libliquid.so
	if [ -f lib/liquid/liquid.h ]; then install -m 644 lib/liquid/liquid.h $(DESTDIR)$(PREFIX)/include/; fi
	$(call pcfile,lib/liquid/liquid.pc.in,$(DESTDIR)$(PREFIX)/lib/pkgconfig/liquid.pc.tmp)
	sed -e 's|@LIBS_PRIVATE@|$(strip $(shell pkg-config --libs libconfig 2>/dev/null))|' \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/liquid.pc.tmp > $(DESTDIR)$(PREFIX)/lib/pkgconfig/liquid.pc
	rm -f $(DESTDIR)$(PREFIX)/lib/pkgconfig/liquid.pc.tmp

# vmrun stencil's kernels as liquid.h updates: -O3, as kernels/ (their rows vectorise).
$(O)/lib/liquid/liq_ukern.o: CFLAGS += $(KERN_CFLAGS)
