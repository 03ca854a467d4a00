#!/usr/bin/env python3
"""forge_enroll.py - a hostile local client for test_identity.sh.

It speaks the frame format of lib/wire/wire.h directly to a daemon's Unix
socket and sends a TASK_ENROLL whose body says whatever it is told to: a
pid that is not its own, a claim of a spawned task's tid, a token.  It
prints the daemon's answer as one line, "tid 0x40002" or "status -4017",
then keeps the connection open until it is killed (a task leaves the VM
when its connection closes).

    forge_enroll.py SOCKET --pid N [--claim TID] [--token HEX] [--exit]
"""
import argparse
import socket
import struct
import sys
import time

MAGIC, VERSION, T_ENROLL, T_REPLY = 0x4C56, 1, 40, 63
HDR = struct.Struct(">HBBIIIiiII")


def frame(ftype, body, fid=1):
    return HDR.pack(MAGIC, VERSION, ftype, len(body), 0, 0, 0, 0, fid, 0) + body


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("daemon closed the connection")
        buf += chunk
    return buf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sock")
    ap.add_argument("--pid", type=lambda v: int(v, 0), required=True)
    ap.add_argument("--claim", type=lambda v: int(v, 0), default=0)
    ap.add_argument("--token", type=lambda v: int(v, 16), default=None)
    ap.add_argument("--exit", action="store_true", help="leave after the answer")
    a = ap.parse_args()

    name = b"forger"
    body = struct.pack(">II", a.pid & 0xFFFFFFFF, 0)
    body += struct.pack(">I", len(name)) + name
    body += struct.pack(">I", a.claim)
    if a.token is not None:
        body += struct.pack(">Q", a.token)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(a.sock)
    s.sendall(frame(T_ENROLL, body))
    try:
        while True:
            h = HDR.unpack(read_exact(s, HDR.size))
            rbody = read_exact(s, h[3])
            if h[2] == T_REPLY and h[8] == 1:
                break
    except EOFError as e:
        print("closed", e, flush=True)
        return 1
    if h[6] != 0:
        print("status", h[6], flush=True)
    else:
        print("tid 0x%x" % struct.unpack(">I", rbody[:4])[0], flush=True)
    if a.exit:
        return 0
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
