#!/usr/bin/env python3
"""ckforge.py IN OUT OFFSET=VALUE...: a liquid checkpoint file (.lqc) with
32-bit fields of its header set, and both its checksums (XXH64 of the
field data at byte 56, of the header with its own checksum zeroed at 72)
computed again: a file that is whole by its checksums but says what its
writer never would, for the tests of what a resume checks beyond them."""
import struct
import sys

P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
M = (1 << 64) - 1


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def rnd(acc, v):
    return (rotl((acc + v * P2) & M, 31) * P1) & M


def merge(acc, v):
    return ((acc ^ rnd(0, v)) * P1 + P4) & M


def xxh64(b, seed=0):
    n, i = len(b), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = rnd(v[k], struct.unpack_from("<Q", b, i + 8 * k)[0])
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
        for k in range(4):
            h = merge(h, v[k])
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = ((rotl(h ^ rnd(0, struct.unpack_from("<Q", b, i)[0]), 27) * P1) + P4) & M
        i += 8
    if i + 4 <= n:
        h = ((rotl(h ^ (struct.unpack_from("<I", b, i)[0] * P1 & M), 23) * P2) + P3) & M
        i += 4
    while i < n:
        h = (rotl(h ^ (b[i] * P5 & M), 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h


def main():
    b = bytearray(open(sys.argv[1], "rb").read())
    hlen = struct.unpack_from("<I", b, 12)[0]
    for a in sys.argv[3:]:
        off, val = a.split("=")
        struct.pack_into("<I", b, int(off, 0), int(val, 0) & 0xFFFFFFFF)
    struct.pack_into("<Q", b, 56, xxh64(bytes(b[hlen:])))
    struct.pack_into("<Q", b, 72, 0)
    struct.pack_into("<Q", b, 72, xxh64(bytes(b[:hlen])))
    open(sys.argv[2], "wb").write(b)


if __name__ == "__main__":
    main()
