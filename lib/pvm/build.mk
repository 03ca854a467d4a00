# lib/pvm/build.mk - libfpvm3, PVM 3.4's Fortran binding (pvm_fortran*.c,
# fpvm3.h).  It sits above the C API: its objects call only pvm3.h's
# functions, so libfpvm3.so.3 names libpvm3.so.3 as needed, and the top
# Makefile leaves these sources out of libpvm3 (PVM_SRC).  Built with
# hidden visibility like libpvm3's objects; libfpvm3.map exports the pvmf*
# names; its run path ($ORIGIN) finds our libpvm3.so.3 beside it before
# any other PVM on the system.  gfortran is needed by the tests that
# compile Fortran programs.
FPVM_SRC   := $(wildcard lib/pvm/pvm_fortran*.c)
LIBFPVM_SO := $(O)/lib/libfpvm3.so.3
LIBFPVM_A  := $(O)/lib/libfpvm3.a
DEB_PKGS   += gfortran

all: $(LIBFPVM_SO) $(LIBFPVM_A)

$(LIBFPVM_SO): $(call obj,$(FPVM_SRC)) lib/pvm/libfpvm3.map $(LIBPVM_SO)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libfpvm3.so.3 -Wl,--version-script=lib/pvm/libfpvm3.map \
	    -Wl,--no-undefined -Wl,-rpath,'$$ORIGIN' -o $@ $(filter %.o,$^) -L$(O)/lib -lpvm3
	$(Q)ln -sf libfpvm3.so.3 $(O)/lib/libfpvm3.so

$(LIBFPVM_A): $(call obj,$(FPVM_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

.PHONY: install-fortran
install: install-fortran
install-fortran: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 lib/pvm/fpvm3.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(LIBFPVM_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libfpvm3.so.3 $(DESTDIR)$(PREFIX)/lib/libfpvm3.so
	install -m 644 $(LIBFPVM_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 man/libfpvm3.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	$(call pcfile,lib/pvm/libfpvm3.pc.in,$(DESTDIR)$(PREFIX)/lib/pkgconfig/libfpvm3.pc)
