#!/usr/bin/env python3
"""flood_tcp.py - idle TCP connections against a daemon port, for
test_strangers.sh: it keeps N connections open that never send a byte,
reopening those the daemon closes (as a flooder would), and writes
"open=X opened=Y closed_by_peer=Z" to STATUS once a second.

    flood_tcp.py HOST PORT N STATUS
"""
import os
import resource
import select
import socket
import sys
import time


def main():
    host, port, n, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    socks, opened, closed = {}, 0, 0
    poller = select.poll()
    last = 0.0
    while True:
        # Up to 200 new ones a round: a steady flood, not a busy loop.
        for _ in range(min(200, n - len(socks))):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect((host, port))
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                break
            socks[s.fileno()] = s
            poller.register(s, select.POLLIN)
            opened += 1
        # Those the daemon closed read as EOF (or an error): reopen them.
        for fd, _ in poller.poll(200):
            s = socks.get(fd)
            if s is None:
                continue
            try:
                data = s.recv(1)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                poller.unregister(fd)
                del socks[fd]
                s.close()
                closed += 1
        now = time.monotonic()
        if now - last >= 1.0:
            last = now
            with open(status + ".tmp", "w") as f:
                f.write("open=%d opened=%d closed_by_peer=%d\n" % (len(socks), opened, closed))
            os.replace(status + ".tmp", status)

if __name__ == "__main__":
    sys.exit(main())
