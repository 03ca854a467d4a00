#!/usr/bin/env python3
"""callcycles.py - file-level call circles in the built objects.

Draws the graph "object A uses a global symbol that object B defines" (from
nm) over the objects of the libraries and programs in a build directory,
and finds its strongly connected components (Tarjan).  A component of more
than one file is a call circle: none of its files can be understood,
tested or replaced without the others.

    tests/tools/callcycles.py [--max N] [--json] BUILD_DIR

Run it from the top of the source tree (the sources tell which objects
are current).

Prints every circle, largest first, and a final line with the largest
size.  Exit status: 0 when no circle has more than N files (default 1:
no circle at all),
1 when one has, 2 on a usage error or when nm fails.
"""
import json
import os
import subprocess
import sys

# Test and benchmark programs only use the code under test: never part of
# a circle, and each defines its own main().
SKIP_DIRS = ("tests", "bench", "san")


def objects(build):
    """The objects of the sources that exist: an object left behind by a
    renamed or deleted file would duplicate names and hide edges."""
    out = []
    for root, dirs, files in os.walk(build):
        rel = os.path.relpath(root, build)
        if rel.split(os.sep)[0] in SKIP_DIRS:
            dirs[:] = []
            continue
        for f in files:
            if f.endswith(".o") and os.path.isfile(os.path.join(rel, f[:-2] + ".c")):
                out.append(os.path.join(root, f))
    return sorted(out)


def symbols(obj):
    r = subprocess.run(["nm", "-P", obj], capture_output=True, text=True)
    if r.returncode != 0:
        raise OSError("nm %s: %s" % (obj, r.stderr.strip()))
    defined, used = set(), set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] == "U":
            used.add(f[0])
        elif f[1] in "TDBRGSCVW":
            defined.add(f[0])
    return defined, used


def graph(objs):
    owner, uses = {}, {}
    for o in objs:
        d, u = symbols(o)
        uses[o] = u
        for s in d:
            owner.setdefault(s, []).append(o)
    edges = {o: set() for o in objs}
    for o in objs:
        for s in uses[o]:
            # A name defined twice (each program's main) says nothing of
            # which file depends on which.
            d = owner.get(s)
            if d and len(d) == 1 and d[0] != o:
                edges[o].add(d[0])
    return edges


def components(edges):
    """Tarjan's algorithm, iterative: the strongly connected components."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def main(argv):
    limit, as_json, args = 1, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--json":
            as_json = True
        elif a == "--max" and i + 1 < len(argv) and argv[i + 1].isdigit():
            limit = int(argv[i + 1])
            i += 1
        elif a.startswith("-") or args:
            print("callcycles: usage: callcycles.py [--max N] [--json] BUILD_DIR", file=sys.stderr)
            return 2
        else:
            args.append(a)
        i += 1
    if not args or not os.path.isdir(args[0]):
        print("callcycles: no build directory (run make first)", file=sys.stderr)
        return 2
    build = args[0]
    objs = objects(build)
    if not objs:
        print("callcycles: no objects under %s (run make first)" % build, file=sys.stderr)
        return 2
    try:
        edges = graph(objs)
    except OSError as e:
        print("callcycles: %s" % e, file=sys.stderr)
        return 2
    circles = sorted((c for c in components(edges) if len(c) > 1), key=lambda c: (-len(c), c))
    largest = len(circles[0]) if circles else 1
    name = lambda o: os.path.relpath(o, build)[:-2] + ".c"
    if as_json:
        print(json.dumps({"objects": len(objs), "largest": largest, "max": limit,
                          "circles": [[name(o) for o in c] for c in circles]}))
    else:
        for c in circles:
            print("circle of %d: %s" % (len(c), " ".join(name(o) for o in c)))
        print("callcycles: %d objects, largest circle %d file%s (limit %d)"
              % (len(objs), largest, "" if largest == 1 else "s", limit))
    if largest > limit:
        if not as_json:
            print("callcycles: FAILED: a circle of %d files; break it (docs/architecture.md)"
                  % largest, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
