#!/usr/bin/env python3
"""Mutation check (issue 32): does a test see a small deliberate bug?

Each line of tests/mutations.txt is one mutation:

    FILE @@ TEXT @@ REPLACEMENT @@ TEST [TEST...]

TEXT must occur exactly once in FILE (else the line is reported as stale
and counts against the score).  TESTs are unit tests (test_x: the binary
build/tests/test_x) or integration scripts (integ:test_x).  Lines starting
with # and blank lines are skipped.

The working tree is never touched: the tree (with its build/ directory, so
only what a mutation changes is rebuilt) is copied to a scratch directory,
each mutation is applied there, the named tests are built with make -j2
and run, and the file is restored.  A mutation is caught when one of its
tests fails, crashes or times out; one that does not compile is reported
as invalid and left out of the score.

    tests/mutate.py [--keep] [--min PERCENT] [--only SUBSTRING] [--jobs N]

Exits 1 when fewer than PERCENT (default 90) of the valid mutations are
caught.  Debian packages no mutation tool for C (apt-cache search
mutation, 2026), hence this script.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" @@ ")]
            if len(parts) != 4 or not parts[3]:
                sys.exit("%s:%d: expected FILE @@ TEXT @@ REPLACEMENT @@ TESTS" % (path, n))
            out.append((n, parts[0], parts[1], parts[2], parts[3].split()))
    return out


def run(cmd, cwd, timeout, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return "timeout", (e.stdout or b"").decode(errors="replace")


def first_failure(text):
    """The first error line and the names of the failed tests."""
    err, failed = "", []
    for line in text.splitlines():
        if line.startswith("[  FAILED  ] test_"):
            if line.split()[-1] not in failed:
                failed.append(line.split()[-1])
        elif not err and ("ERROR" in line or line.startswith("not ok") or "error" in line):
            err = line.strip()
    if not err:
        err = text.strip().splitlines()[-1] if text.strip() else ""
    return err + (" [failed: %s]" % ", ".join(failed) if failed else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutations.txt"))
    ap.add_argument("--min", type=float, default=90.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the scratch tree")
    ap.add_argument("--jobs", default="2")
    a = ap.parse_args()

    muts = parse(a.list)
    if a.only:
        muts = [m for m in muts if a.only in m[1] or a.only in m[2] or a.only in " ".join(m[4])]
    scratch = tempfile.mkdtemp(prefix="lvm-mutate.")
    tree = os.path.join(scratch, "tree")
    print("mutate: copying the tree to %s" % tree, flush=True)
    shutil.copytree(ROOT, tree, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "san"))
    make = ["make", "-j" + a.jobs, "--no-print-directory"]
    rc, out = run(make + ["all"], tree, 3600)
    if rc != 0:
        print(out[-3000:])
        sys.exit("mutate: the unmutated tree does not build")
    caught = missed = invalid = 0
    survivors = []
    t0 = time.time()
    for n, path, text, repl, tests in muts:
        label = "%s:%d %s: %r -> %r" % (os.path.basename(a.list), n, path, text, repl)
        src = os.path.join(tree, path)
        try:
            with open(src) as f:
                orig = f.read()
        except OSError:
            orig = ""
        if orig.count(text) != 1:
            print("STALE    %s (found %d times)" % (label, orig.count(text)), flush=True)
            missed += 1
            survivors.append(label + " [stale]")
            continue
        try:
            with open(src, "w") as f:
                f.write(orig.replace(text, repl, 1))
            unit = ["build/tests/" + t for t in tests if not t.startswith("integ:")]
            integ = [t[6:] for t in tests if t.startswith("integ:")]
            targets = unit + (["all"] if integ else [])
            rc, out = run(make + targets, tree, 1800)
            if rc != 0:
                print("INVALID  %s (does not build: %s)" % (label, first_failure(out)), flush=True)
                invalid += 1
                continue
            why = None
            for t in unit:
                rc, out = run([os.path.join(tree, t)], tree, 120)
                if rc != 0:
                    why = "%s: %s" % (os.path.basename(t), "timed out" if rc == "timeout"
                                      else first_failure(out))
                    break
            for t in integ if why is None else []:
                env = dict(os.environ, VMD=tree + "/build/bin/vmd",
                           VMCTL=tree + "/build/bin/vmctl", VMRUN=tree + "/build/bin/vmrun")
                rc, out = run(["bash", "tests/integ/%s.sh" % t], tree, 600, env)
                bad = [l for l in out.splitlines() if l.startswith("not ok")]
                if rc != 0 or bad:
                    why = "%s: %s" % (t, bad[0] if bad else "exit %s" % rc)
                    break
            if why:
                caught += 1
                print("caught   %s\n         by %s" % (label, why), flush=True)
            else:
                missed += 1
                survivors.append(label)
                print("MISSED   %s (%s pass)" % (label, " ".join(tests)), flush=True)
        finally:
            with open(src, "w") as f:
                f.write(orig)
            # Newer than the mutant's object, so the next build recompiles it.
            os.utime(src, (time.time(), time.time()))
    valid = caught + missed
    pct = 100.0 * caught / valid if valid else 0.0
    print("\nmutate: %d caught, %d missed, %d invalid; score %d/%d = %.1f %% (%.0f s)"
          % (caught, missed, invalid, caught, valid, pct, time.time() - t0))
    for s in survivors:
        print("  survivor: " + s)
    if a.keep:
        print("mutate: scratch tree kept in " + tree)
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if pct >= a.min else 1


if __name__ == "__main__":
    sys.exit(main())
