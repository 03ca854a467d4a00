# tests/: packages the integration tests need beyond the build (make deps).
# test_ssh_hosts.sh starts a real sshd per host (issue 33).
DEB_PKGS += openssh-server openssh-client
