# tests/: targets and packages beside the tests.
#
# test_ssh_hosts.sh starts a real sshd per host: make deps installs it.
DEB_PKGS += openssh-server openssh-client

# make mutate: the mutation check (tests/mutate.py with the list in
# tests/mutations.txt).  It copies the tree to a scratch directory and never
# touches this one; not part of make check.  MUTATE_ARGS passes options,
# e.g. MUTATE_ARGS="--only liq_balance".
.PHONY: mutate
mutate:
	nice tests/mutate.py $(MUTATE_ARGS)
