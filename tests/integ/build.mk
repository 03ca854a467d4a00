# tests/integ/build.mk - integration programs written against liquid.h
# (tests/integ/liquid_*.c): built as the PVM programs beside them are, but
# against libliquid.so.0 (which names libpvm3.so.3), found through the
# same run path.  A more specific pattern than the top Makefile's
# $(O)/tests/integ/%, so it wins for these names.
INC_tests/integ += lib/liquid

$(O)/tests/integ/liquid_%: $(O)/tests/integ/liquid_%.o $(LIBLIQ_SO) $(LIBPVM_SO)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(O)/lib -lliquid -lpvm3 -lm -Wl,-rpath,'$$ORIGIN/../../lib'
