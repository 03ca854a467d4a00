#!/usr/bin/env bash
# vmrun stencil's final field in files (issue 25, "Fields in and out") on a
# local VM of 2 daemons: --output FILE.h5 writes dataset /u with the grid's
# shape and its attributes (h5dump -H), holding the bits of the same job's
# raw --output; FILE.xmf beside it is well-formed XML naming FILE.h5:/u;
# --png writes a picture of the documented size; the JSON report names the
# files; a job file sets png and slice; a bad slice, field or path exits 2
# before the job runs, and so does a missing HDF5 and PNG module; a fifo
# given as a job, hints, checkpoint, trace or input file is refused at once.
. "$(dirname "$0")/lib.sh"

command -v h5dump >/dev/null || skip_all "h5dump (Debian hdf5-tools) is not installed"
write_conf
check "start a local VM of 2 hosts" "$VMCTL" start --local 2 -c "$T/test.conf"

job=(stencil --quiet --probe-seconds 0.01 --grid 24 --iters 5 --hosts host0,host1)
check "a 24^3 job writes f.h5, f.xmf and s.png" \
    "$VMRUN" "${job[@]}" --verify --output "$T/f.h5" --png "$T/s.png" --json "$T/r.json"
check "... the same job writes the raw field" "$VMRUN" "${job[@]}" --output "$T/f.raw"
check "... the raw file is 24^3 doubles" test "$(stat -c %s "$T/f.raw")" = $((24 * 24 * 24 * 8))

check "h5dump -H shows /u as 24x24x24 doubles with its attributes" bash -c '
    h5dump -H "$1" >"$1.hdr" || exit 1
    grep -q "DATASET \"u\"" "$1.hdr" && grep -q "H5T_IEEE_F64LE" "$1.hdr" &&
    grep -q "DATASPACE  SIMPLE { ( 24, 24, 24 ) / ( 24, 24, 24 ) }" "$1.hdr" || exit 1
    for a in grid origin spacing iteration time checksum; do
        grep -q "ATTRIBUTE \"$a\"" "$1.hdr" || { echo "no attribute $a"; exit 1; }
    done' _ "$T/f.h5"
check "... grid, iteration and checksum are the job's" bash -c '
    h5dump -a /u/grid -a /u/iteration -a /u/checksum "$1" >"$1.attr" || exit 1
    cs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"checksum\"])" "$2")
    grep -q "(0): 24, 24, 24" "$1.attr" && grep -q "(0): 5$" "$1.attr" &&
        grep -q "\"$cs\"" "$1.attr" || { cat "$1.attr"; echo "checksum $cs"; exit 1; }' \
    _ "$T/f.h5" "$T/r.json"
check "... its data (h5dump -b) equals the raw --output bit for bit" bash -c '
    h5dump -d /u -b NATIVE -o "$1.bin" "$1" >/dev/null && cmp "$1.bin" "$2"' _ "$T/f.h5" "$T/f.raw"

check "f.xmf is well-formed XML: a 24^3 3DCoRectMesh with attribute u at f.h5:/u" python3 -c '
import sys, xml.etree.ElementTree as ET
g = ET.parse(sys.argv[1]).getroot().find("Domain/Grid")
t = g.find("Topology")
a = g.find("Attribute")
d = a.find("DataItem")
ok = (t.get("TopologyType") == "3DCoRectMesh" and t.get("Dimensions") == "24 24 24" and
      g.find("Geometry").get("GeometryType") == "ORIGIN_DXDYDZ" and a.get("Name") == "u" and
      d.get("Format") == "HDF" and d.text.strip() == "f.h5:/u" and d.get("Dimensions") == "24 24 24")
sys.exit(0 if ok else 1)' "$T/f.xmf"

# liq_io.h: S = 512/24 = 21 pixels a point, plot 504x504, margins 16, bar 24, labels 136.
check "s.png is an RGB PNG of 696x536 (the documented size)" python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(33)
w, h, depth, colour = struct.unpack(">IIBB", b[16:26])
sys.exit(0 if b[:8] == b"\x89PNG\r\n\x1a\n" and (w, h, depth, colour) == (696, 536, 8, 2) else 1)' \
    "$T/s.png"
check "the JSON report names the files and the slice (z=12, the middle)" python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1]))
f = [(os.path.basename(x["path"]), x["kind"]) for x in r["files"]]
sys.exit(0 if f == [("f.h5", "hdf5"), ("f.xmf", "xdmf"), ("s.png", "png")] and r["verified"] and
         r["slice"] == {"axis": "z", "index": 12, "field": "u"} else 1)' "$T/r.json"

cat >"$T/job.cfg" <<CFG
grid = 24; iters = 5; hosts = "host0,host1"; png = "$T/x.png"; slice = "x=3"; field = "u";
CFG
check "a job file's png, slice and field draw x=3" bash -c '
    "$1" stencil --quiet --probe-seconds 0.01 --job "$2" --json "$3" &&
    grep -q "\"slice\":{\"axis\":\"x\",\"index\":3" "$3" && test -s "$4"' \
    _ "$VMRUN" "$T/job.cfg" "$T/x.json" "$T/x.png"

# exit2 "what" ARGS...: vmrun exits 2, says something matching what, and ran no job.
exit2() {
    local what=$1; shift
    "$VMRUN" "$@" >"$T/bad.out" 2>&1
    local rc=$?
    [ $rc = 2 ] && grep -q -- "$what" "$T/bad.out" && ! grep -q "^job:" "$T/bad.out" ||
        { echo "exit $rc"; cat "$T/bad.out"; return 1; }
}
check "--slice z=24 on a 24^3 grid exits 2" exit2 "outside the 24x24x24 grid (z is 0..23)" \
    "${job[@]}" --png "$T/b.png" --slice z=24
check "--slice w=1 exits 2" exit2 "--slice: expected x=K" "${job[@]}" --png "$T/b.png" --slice w=1
check "--field v exits 2" exit2 "--field v: no such field" "${job[@]}" --png "$T/b.png" --field v
check "--slice without --png exits 2" exit2 "give --png FILE too" "${job[@]}" --slice y=1
check "--output into a missing directory exits 2" exit2 "--output $T/none/f.h5: cannot write there" \
    "${job[@]}" --output "$T/none/f.h5"
check "--png into a missing directory exits 2" exit2 "--png $T/none/s.png: cannot write there" \
    "${job[@]}" --png "$T/none/s.png"
check "... and nothing was written" test ! -e "$T/b.png"
check "--png into /proc (root may pass its permissions, not write there) exits 2" \
    exit2 "--png /proc/s.png: cannot write there" "${job[@]}" --png /proc/s.png
# The reports are written after the job: their paths are tried before it.
check "--json into a missing directory exits 2 before the job" \
    exit2 "--json $T/none/r.json: cannot write there" "${job[@]}" --json "$T/none/r.json"
check "--svg into a missing directory exits 2 before the job" \
    exit2 "--svg $T/none/r.svg: cannot write there" "${job[@]}" --svg "$T/none/r.svg"
check "--trace into a missing directory exits 2 before the job" \
    exit2 "--trace $T/none/t.json: cannot write there" "${job[@]}" --trace "$T/none/t.json"
check "... and a path tried and refused leaves no file" test ! -e "$T/none"
# A fifo with no writer is refused at once, never waited on.
mkfifo "$T/fifo" && mkdir -p "$T/ckfifo" && mkfifo "$T/ckfifo/checkpoint.lqc" && mkfifo "$T/fifo.h5"
check "--job FIFO exits 2 at once" exit2 "not a regular file" "${job[@]}" --job "$T/fifo"
check "--hints FIFO exits 2 at once" exit2 "not a regular file" "${job[@]}" --hints "$T/fifo"
check "--resume DIR whose checkpoint is a fifo exits 2 at once" exit2 "not a regular file" \
    stencil --resume "$T/ckfifo"
check "vmrun analyze FIFO and a directory with a folder named *.json fail at once, said" bash -c '
    mkdir -p "$1/tdir/sub.json" && ! timeout 20 "$0" analyze "$1/fifo" 2>"$1/an.err" &&
    grep -q "not a regular file" "$1/an.err" &&
    ! timeout 20 "$0" analyze "$1/tdir" 2>"$1/an.err" && grep -q "sub.json: cannot read: not a regular file" "$1/an.err"' \
    "$VMRUN" "$T"
check "--input FIFO.h5:DATASET exits 2 at once" bash -c '
    timeout 20 "$0" --grid 16x16x1 --iters 3 --quiet --input "$1:u" >"$1.out" 2>&1; [ $? = 2 ] &&
    grep -q "not a regular file" "$1.out"' "$EXAMPLES/laplace2d" "$T/fifo.h5"
L2=("$EXAMPLES/laplace2d" --grid 16x16x1 --iters 3 --quiet --probe-seconds 0.01)
check "--input once per field: both read, neither dropped (laplace2d's u and change)" bash -c '
    "$0" --grid 16x16x1 --iters 50 --quiet --probe-seconds 0.01 --output "$1/l.h5" >/dev/null &&
    a=$("$0" "${@:2}" --input "$1/l.h5:u" | grep "^checksum") &&
    b=$("$0" "${@:2}" --input "$1/l.h5:change" --input "$1/l.h5:u" | grep "^checksum") &&
    c=$("$0" "${@:2}" | grep "^checksum") &&
    [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] &&
    { "$0" "${@:2}" --input "$1/l.h5:u" --input "$1/none.h5:change" 2>&1; [ $? = 2 ]; } |
        grep -q "none.h5"' "${L2[0]}" "$T" "${L2[@]:1}"
check "--input twice for one field: exit 2, naming it" bash -c '
    "$0" "${@:2}" --input "$1/l.h5:u" --input "$1/l.h5:/u" >"$1/in2.out" 2>&1; [ $? = 2 ] &&
    grep -q "field u has its values from an earlier --input" "$1/in2.out"' "${L2[0]}" "$T" "${L2[@]:1}"
check "LIQUIDVM_HINTS=FIFO: a PVM program says so and runs without hints" bash -c '
    LIQUIDVM_HINTS="$1" timeout 20 "$0" >/dev/null 2>"$1.err" && grep -q "not a regular file; no hints used" "$1.err"' \
    "$(dirname "$VMCTL")/../tests/integ/pvm_hostload" "$T/fifo"
# HDF5 and libpng are loaded by the master that writes a file (the module
# beside vmrun: ../lib/liquid/liquid_io.so), never by vmrun or its workers.
check "vmrun names neither HDF5 nor libpng; the module names both" bash -c '
    ! ldd "$1" | grep -q "hdf5\|png" &&
    ldd "$(dirname "$1")/../lib/liquid/liquid_io.so" | grep -q hdf5 &&
    ldd "$(dirname "$1")/../lib/liquid/liquid_io.so" | grep -q png' _ "$VMRUN"
export LIQUIDVM_IO_MODULE=$T/none/liquid_io.so
check "without the module, --output f.h5 exits 2 before the job, naming where it looked" exit2 \
    "--output: the HDF5 and PNG module (liquid_io.so) could not be loaded (looked for $T/none/liquid_io.so)" \
    "${job[@]}" --output "$T/m.h5"
check "... --png too" exit2 "--png: the HDF5 and PNG module" "${job[@]}" --png "$T/m.png"
echo keep >"$T/keep.json"
check "... a report file that is there was tried (a job that stops after it) and is left as it was" \
    bash -c 'f=$1; shift; "$@" >/dev/null 2>&1; [ $? = 2 ] && [ "$(cat "$f")" = keep ]' _ "$T/keep.json" \
    "$VMRUN" "${job[@]}" --png "$T/m.png" --json "$T/keep.json"
check "... and one that was not there is not left behind" bash -c '
    f=$1; shift; "$@" >/dev/null 2>&1; [ $? = 2 ] && [ ! -e "$f" ]' _ "$T/new.json" \
    "$VMRUN" "${job[@]}" --png "$T/m.png" --json "$T/new.json"
check "... a raw --output needs no module" "$VMRUN" "${job[@]}" --output "$T/m.raw"
unset LIQUIDVM_IO_MODULE
check "halt" "$VMCTL" halt
