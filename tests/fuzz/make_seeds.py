#!/usr/bin/env python3
"""make_seeds.py - writes the seed corpora of tests/fuzz/corpus/ (committed;
rerun only to change them).  Each seed is a small, well-formed input of its
harness, so fuzzing starts from the layouts the code expects (lib/wire/wire.h
for frames and bodies, conf/vmd.conf for the configuration, the job-file
keys of vmrun(1)).  corpus/liq_job/ is written by its harness instead, from
the master's own packing of the JOB message and the fingerprints of the
harness's job descriptions (fuzz_liq_job.c says how)."""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def u8(v): return struct.pack(">B", v)
def u32(v): return struct.pack(">I", v & 0xFFFFFFFF)
def i32(v): return struct.pack(">i", v)
def u64(v): return struct.pack(">Q", v)
def s(t): t = t.encode(); return u32(len(t)) + t


def frame(ftype, body=b"", src=0, dst=0, tag=0, ctx=0, fid=0, flags=0):
    return struct.pack(">HBBIIIiiII", 0x4C56, 1, ftype, len(body), src, dst, tag, ctx, fid,
                       flags) + body


def write(name, seeds):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for k, data in seeds.items():
        with open(os.path.join(d, k), "wb") as f:
            f.write(data)


H1, H2, H3 = 1 << 18, 2 << 18, 3 << 18
T2, T3 = H2 | 2, H3 | 5


def wire_rx():
    hello = frame(1, u32(1) + s("host3") + u32(3) + s("LINUX64") + u32(1000) + s("host1"))
    msg = frame(64, b"\x00\x00\x00\x05hello\x00\x00\x00", src=T3, dst=T2, tag=7,
                flags=0x10000000)
    return {
        "one-hello": b"\x1f" + hello,
        "two-frames-bytewise": b"\x00" + hello + msg,
        "reserve-path": b"\x80" + msg + frame(3),
        "oversized": b"\x10" + struct.pack(">HBBI", 0x4C56, 1, 64, 1 << 20) + b"\0" * 24,
        "bad-magic": b"\x05" + b"XY" + b"\0" * 30,
        "strings": b"\x7f" + frame(2, s("a" * 40) + u32(9) + u64(1) + u8(1), tag=0x7fffffff),
    }


def pvm_unpack():
    xdr_int_str = u32(42) + u32(6) + b"hello\0\0\0" + u32(0xFFFFFFFF)
    return {
        "xdr-int-str": u8(0) + u8(3) + bytes([0x01, 0x05, 0x02]) + xdr_int_str,
        "xdr-unterminated": u8(0) + u8(2) + bytes([0x05, 0x46]) + u32(3) + b"abc\0",
        "raw-doubles": u8(1) + u8(2) + bytes([0x32, 0x12]) + struct.pack("<4d", 1, 2, 3, 4),
        "xdr-unpackf": u8(0) + u8(1) + bytes([0x07]) + u32(1) + u32(2) + u32(0) + u32(3)
        + struct.pack(">d", 1.5) + u32(65),
        "alien-bytes": u8(2) + u8(1) + bytes([0x70]) + b"0123456789abcdef",
        "negative-len": u8(0) + u8(1) + bytes([0x05]) + u32(0x80000000) + b"x",
    }


def conf_load():
    with open(os.path.join(HERE, "..", "..", "conf", "vmd.conf"), "rb") as f:
        full = f.read()
    return {
        "vmd.conf": full,
        "small": b'listen = { address = "127.0.0.1"; port = 0; };\nheartbeat = 0.2;\n'
                 b'log = { level = "debug"; file = "logs/%h.log"; };\n',
        "limits": b"limits = { max_message = 1048576; max_tasks = 10; max_peer_queue = 2097152;"
                  b" max_handshakes = 8; max_handshakes_per_address = 2; };\n",
        "hosts": b'hosts = ( { name = "ws1"; address = "10.0.0.2"; port = 7000; speed = 2000;'
                 b' spawn_path = [ "/opt/bin" ]; send_certs = false; } );\n',
        "errors": b'heartbeat = -1;\nspeed = "fast";\nlisten = 3;\nbogus = 1;\n',
        "spawn": b'spawn_path = [ "$HOME/bin", "$PVM_ROOT/bin/$PVM_ARCH" ];\n'
                 b'hoststart = "ssh -o BatchMode=yes %h %v";\n',
    }


def vmrun_job():
    return {
        "basic": b"grid = 64;\niters = 100;\nkernel = \"jacobi\";\n",
        "grid-list": b"grid = [32, 48, 16];\nquanta = 8;\ntasks_per_host = 2;\nverify = true;\n",
        "balance": b"balance = true;\nepoch = 5;\nheavy = 4;\nmin_gain = 0.05;\n"
                   b"decomp = \"brbd\";\nnet = \"lan\";\n",
        "reclaim": b"reclaim = true;\nreclaim_below = 0.5;\nreclaim_after = 2.0;\n"
                   b"rejoin_above = 0.8;\nrejoin_after = 3.0;\nsvg = \"plot.svg\";\n",
        "errors": b"grid = \"x\";\nnosuch = 1;\niters = -3;\nhosts = [1, \"a\"];\n",
    }


def vmd_peer():
    load = i32(4) + b"".join(struct.pack(">d", x) for x in (1, 0.5, 0.25, 3, 2, 1, 0.1)) \
        + u64(8 << 30) + u64(4 << 30) + u64(12345)
    table = u32(7) + u32(1) + u32(3) + b"".join(
        u32(i) + s("host%d" % i) + s("127.0.0.%d" % i) + u32(7000 + i) + s("LINUX64")
        + u32(1000) + s("") for i in (1, 2, 3))
    xdr = u32(5) + u32(6) + b"hello\0\0\0"
    seeds = {
        # byte 0: bit 0 we are the master; bits 1-2 who the link is; the rest, read sizes
        "hello-from-master": u8(0x00) + frame(1, u32(1) + s("host1") + u32(1) + s("LINUX64")
                                              + u32(1000) + s("host1")),
        "hosttable": u8(0x08) + frame(2, table, src=H1),
        "heartbeat-load": u8(0x02) + frame(3, src=H3) + frame(12, load, src=H3),
        "msg-to-task": u8(0x02) + frame(64, xdr, src=T3, dst=T2, tag=1, flags=0x10000000),
        "mcast": u8(0x02) + frame(11, u32(2) + u32(T2) + u32(H2 | 3) + xdr, src=T3, tag=9,
                                  flags=0x10000000),
        "fwd-kill-list": u8(0x02) + frame(6, u32(1) + u32(T3) + u32(43) + u32(T2) + u32(0),
                                          src=H3)
        + frame(6, u32(2) + u32(T3) + u32(44) + u32(0), src=H3),
        "fwd-spawn": u8(0x02) + frame(6, u32(3) + u32(T3) + u32(42) + u32(T3) + s("prog")
                                      + u32(0) + u32(0) + u32(0) + u32(1) + u32(0), src=H3),
        "fwd-reply": u8(0x02) + frame(7, u32(1) + u32(1), src=H3),
        "group-sync": u8(0x00) + frame(8, u32(1) + s("grp") + u32(T2) + u32(1) + i32(0),
                                       src=H1),
        "barrier-done": u8(0x00) + frame(10, s("grp") + u32(2) + i32(0), src=H1),
        "member-relay-join": u8(0x01) + frame(5, u32(9) + u32(53) + u32(T3) + s("grp"),
                                              src=H3),
        "member-relay-mbox": u8(0x01) + frame(5, u32(9) + u32(48) + u32(T3) + s("box")
                                              + u32(0) + u32(0x10000000) + xdr, src=H3),
        "member-arrive": u8(0x01) + frame(9, s("grp") + i32(2) + u32(1) + u32(1) + u32(T3),
                                          src=H3),
        "member-relay-conf": u8(0x01) + frame(5, u32(4) + u32(32), src=H3),
        "stranger-hello": u8(0x06) + frame(1, u32(1) + s("host3") + u32(3) + s("LINUX64")
                                           + u32(1000) + s("host1")),
        "direct": u8(0x02) + frame(66, b"\x01" * 32 + s("/tmp/x.sock") + s("127.0.0.1")
                                   + u32(9), src=T3, dst=T2, tag=1),
        "halt": u8(0x00) + frame(4, src=H1),
    }
    return seeds


M64 = (1 << 64) - 1
XP1, XP2, XP3, XP4, XP5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                           0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r): return ((x << r) | (x >> (64 - r))) & M64
def _round(acc, v): return (_rotl((acc + v * XP2) & M64, 31) * XP1) & M64


def xxh64(b, seed=0):
    """XXH64, as lib/liquid/liq_ckfile.c computes it."""
    n, p = len(b), 0
    if n >= 32:
        v = [(seed + XP1 + XP2) & M64, (seed + XP2) & M64, seed, (seed - XP1) & M64]
        while n - p >= 32:
            for i in range(4):
                v[i] = _round(v[i], struct.unpack_from("<Q", b, p + 8 * i)[0])
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for x in v:
            h = ((h ^ _round(0, x)) * XP1 + XP4) & M64
    else:
        h = (seed + XP5) & M64
    h = (h + n) & M64
    while n - p >= 8:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", b, p)[0]), 27) * XP1 + XP4) & M64
        p += 8
    if n - p >= 4:
        h = (_rotl(h ^ (struct.unpack_from("<I", b, p)[0] * XP1 & M64), 23) * XP2 + XP3) & M64
        p += 4
    while p < n:
        h = (_rotl(h ^ (b[p] * XP5 & M64), 11) * XP1) & M64
        p += 1
    h ^= h >> 33
    h = h * XP2 & M64
    h ^= h >> 29
    h = h * XP3 & M64
    return h ^ (h >> 32)


def ckfile_image(it, ck, nstate, n, desc, values):
    """A checkpoint file of lib/liquid/liq_ckfile.h's layout."""
    d = desc.encode()
    h = (80 + len(d) + 7) & ~7
    data = struct.pack("<%dd" % len(values), *values)
    hdr = bytearray(h)
    hdr[0:8] = b"LIQCKPT\0"
    struct.pack_into("<IIiiiiiiIIQQQ", hdr, 8, 1, h, it, ck, nstate, n[0], n[1], n[2], len(d),
                     0x01020304, h + len(data), xxh64(data), 0)
    hdr[80:80 + len(d)] = d
    struct.pack_into("<Q", hdr, 72, xxh64(bytes(hdr)))
    return bytes(hdr) + data


def ckfile():
    desc = "program stencil\nkernel jacobi\ngrid 4x3x2\niterations 200\nseed 1\nstate 1\n"
    good = ckfile_image(40, 20, 1, (4, 3, 2), desc, [i * 0.5 for i in range(24)])
    two = ckfile_image(20, 20, 2, (3, 2, 1), desc.replace("state 1", "state 2"),
                       [float(i) for i in range(12)])
    flipped = bytearray(good)
    flipped[-5] ^= 1
    return {
        "good": good,
        "two-states": two,
        "no-desc": ckfile_image(10, 10, 1, (1, 1, 1), "", [3.0]),
        "truncated": good[:100],
        "flipped": bytes(flipped),
        "header-only": good[:80],
        "long": good + b"\0" * 8,
    }


if __name__ == "__main__":
    write("wire_rx", wire_rx())
    write("pvm_unpack", pvm_unpack())
    write("conf_load", conf_load())
    write("vmrun_job", vmrun_job())
    write("vmd_peer", vmd_peer())
    write("ckfile", ckfile())
