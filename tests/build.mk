# tests/: targets beside the tests.
#
# make mutate: the mutation check of issue 32 (tests/mutate.py with the list
# in tests/mutations.txt).  It copies the tree to a scratch directory and
# never touches this one; not part of make check.  MUTATE_ARGS passes
# options, e.g. MUTATE_ARGS="--only liq_balance".
.PHONY: mutate
mutate:
	nice tests/mutate.py $(MUTATE_ARGS)
