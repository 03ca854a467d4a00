#!/usr/bin/env bash
# liquid_farm (issue 28's "From C") through examples/mandelbrot on a local
# VM of 3 daemons: bad options exit 2 before anything runs; the farm's
# iteration counts equal a serial computation bit for bit (each schedule);
# the PNG is a valid PNG of the image's size; and with a host's daemon
# killed mid-run every tile's result is placed exactly once (the counts
# still equal the serial ones, the report's tiles per host add up, the lost
# host ran tiles before it left); a host added mid-run takes tiles.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to read the report and the PNG"
MANDEL=${MANDEL:-$(pwd)/build/examples/mandelbrot}
[ -x "$MANDEL" ] || skip_all "$MANDEL is not built (make)"

# usage_err WHAT MESSAGE ARGS...: mandelbrot ARGS exits 2 and says MESSAGE.
usage_err() {
    local what=$1 msg=$2; shift 2
    (cd "$T" && "$MANDEL" "$@" >"$T/u.out" 2>"$T/u.err")
    local rc=$?
    if [ $rc = 2 ] && grep -q -- "$msg" "$T/u.err" && [ ! -e "$T/mandelbrot.png" ]; then
        ok "$what (exit 2: $(head -1 "$T/u.err"))"
    else
        notok "$what (exit $rc)"; sed 's/^/#   /' "$T/u.err" | head -5
    fi
}
# rep FILE EXPR: a Python condition on the JSON report R (H: hosts by name).
rep() {
    python3 - "$@" <<'EOF'
import json, sys
R = json.load(open(sys.argv[1]))
H = {h["name"]: h for h in R["hosts"]}
E = R["events"]
if eval("(" + sys.argv[2] + ")"):
    sys.exit(0)
print("# report: tiles %s, items per host %s, chunk sizes %s" % (R.get("tiles"),
      {n: h["items"] for n, h in H.items()}, [c["size"] for c in R.get("chunks", [])][:40]))
sys.exit(1)
EOF
}
# png_ok FILE W H: a PNG whose chunks' CRCs hold, W x H 8-bit grey, whose
# image data inflates to exactly H rows of 1 + W bytes.
png_ok() {
    python3 - "$@" <<'EOF'
import struct, sys, zlib
d, w, h = open(sys.argv[1], "rb").read(), int(sys.argv[2]), int(sys.argv[3])
assert d[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
p, idat, kinds = 8, b"", []
while p < len(d):
    n, = struct.unpack(">I", d[p:p + 4]); kind = d[p + 4:p + 8]; body = d[p + 8:p + 8 + n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", d[p + 8 + n:p + 12 + n])[0], kind
    kinds.append(kind); idat += body if kind == b"IDAT" else b""; p += 12 + n
assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND", kinds
iw, ih, depth, colour = struct.unpack(">IIBB", d[16:26])
assert (iw, ih, depth, colour) == (w, h, 8, 0), (iw, ih, depth, colour)
assert len(zlib.decompress(idat)) == h * (1 + w)
EOF
}

# ---- bad options, before any VM exists: nothing may run ----
usage_err "an unknown option" "unknown option '--bogus'" --bogus
usage_err "a farm option without its value" "needs a value" --hosts
usage_err "--tasks-per-host 0" "tasks-per-host 0" --tasks-per-host 0
usage_err "an unknown schedule" "fractiling, static or self" --schedule nope
usage_err "a fraction outside (0, 1]" "(0, 1]" --fraction 1.5
usage_err "a stray argument" "unexpected argument" stray
usage_err "the program's own bad option" "whole numbers" --size 0x5
usage_err "a size past int (it wrapped to 1 pixel)" "whole numbers" --size 4294967297x3
usage_err "a size with junk after it" "whole numbers" --size 5x5junk
usage_err "a --maxiter past int" "whole numbers" --maxiter 99999999999
usage_err "an empty --hosts" "expected host names" --hosts ""
(cd "$T" && "$MANDEL" --help >"$T/help.out" 2>&1)
rc=$?
check "--help: exit 0, the farm's options and the program's, nothing computed (exit $rc)" bash -c \
    '[ $0 = 0 ] && grep -q -- "--tasks-per-host" "$1" && grep -q -- "--check-serial" "$1" &&
     [ ! -e "$2/mandelbrot.png" ]' $rc "$T/help.out" "$T"
(cd "$T" && "$MANDEL" --quiet >"$T/novm.out" 2>"$T/novm.err")
rc=$?
check "with no VM: exit 1 and a message naming vmctl start (exit $rc)" bash -c \
    '[ $0 = 1 ] && grep -q "vmctl start" "$1"' $rc "$T/novm.err"

write_conf 1.5
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"
cd "$T" || exit 1
usage_err "a host not in the VM" "not in the virtual machine" --hosts nohost

# ---- the farm against a serial computation, bit for bit ----
"$MANDEL" --size 300x200 --maxiter 60000 --check-serial --png "$T/a.png" --json "$T/a.json" \
    --reclaim off >"$T/a.out" 2>"$T/a.err"
rc=$?
check "a 300x200 image: exit 0 (exit $rc)" [ $rc = 0 ]
check "its counts equal the serial computation's bit for bit" grep -q "bit for bit" "$T/a.out"
check "the PNG is a valid 300x200 8-bit grey PNG" png_ok "$T/a.png" 300 200
check "the report: tiles per host add up to all tiles, every host took some, chunks shrink" \
    rep "$T/a.json" 'R["tile"] == 4 and sum(h["items"] for h in R["hosts"]) == R["tiles"] == 75 * 50 and
    R["n"] == [300, 200, 1] and R["record"] == 4 and all(h["items"] > 0 for h in R["hosts"]) and
    R["schedule"] == "fractiling" and R["chunks"][0]["size"] > R["chunks"][-1]["size"]'
check "the summary names every host" bash -c 'grep -q "on 3 hosts" "$0" && grep -q host2 "$0"' \
    "$T/a.err"
for s in static self; do
    "$MANDEL" --size 120x90 --maxiter 500 --check-serial --png "$T/$s.png" --schedule $s --quiet \
        --tasks-per-host 2 --reclaim off >"$T/$s.out" 2>"$T/$s.err"
    rc=$?
    check "--schedule $s, 2 workers per host: exit 0, equal to the serial counts (exit $rc)" \
        bash -c '[ $0 = 0 ] && grep -q "bit for bit" "$1"' $rc "$T/$s.out"
done
"$MANDEL" --size 64x48 --maxiter 100 --png "$T/one.png" --hosts host1 --quiet --reclaim off \
    --json "$T/one.json" --check-serial >"$T/one.out" 2>&1
rc=$?
check "--hosts host1: exit 0, every tile on host1, equal to serial (exit $rc)" bash -c \
    '[ $0 = 0 ] && grep -q "bit for bit" "$1"' $rc "$T/one.out"
check "... and the report lists host1 alone" rep "$T/one.json" \
    'list(H) == ["host1"] and H["host1"]["items"] == R["tiles"]'

# ---- a host's daemon killed during the job ----
"$MANDEL" --size 512x384 --maxiter 40000 --check-serial --png "$T/b.png" --json "$T/b.json" \
    --reclaim off --quiet >"$T/b.out" 2>"$T/b.err" &
JOB=$!
sleep 1
kill -9 "$(vmd_pid_of host2)" 2>/dev/null
wait $JOB
rc=$?
check "host2's vmd killed mid-run: the job exits 0 (exit $rc)" [ $rc = 0 ]
check "the counts still equal the serial computation's bit for bit" grep -q "bit for bit" "$T/b.out"
check "the report: host2 lost after running tiles; tiles per host add up once" rep "$T/b.json" \
    'H["host2"]["lost"] and H["host2"]["items"] > 0 and any(e["host"] == "host2" for e in E) and
     sum(h["items"] for h in R["hosts"]) == R["tiles"]'
check "the PNG is a valid 512x384 PNG" png_ok "$T/b.png" 512 384
[ $rc = 0 ] || sed 's/^/#   /' "$T/b.err" | tail -5
python3 - "$T/b.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[1]))
print("# kill run: %.1f s, tiles per host %s, %d given to another worker, %d duplicates" % (
      R["makespan_s"], {h["name"]: h["items"] for h in R["hosts"]}, R["reruns"], R["duplicates"]))
EOF

# ---- a host added during the job: its worker gets the job and takes tiles ----
"$MANDEL" --size 640x480 --maxiter 40000 --png "$T/e.png" --json "$T/e.json" \
    --reclaim off --quiet >"$T/e.out" 2>"$T/e.err" &
JOB=$!
sleep 0.5
check "vmctl add host3 while the job runs (host2 is gone)" "$VMCTL" add host3
wait $JOB
rc=$?
check "... the job exits 0 (exit $rc)" [ $rc = 0 ]
check "... its PNG is a valid 640x480 PNG" png_ok "$T/e.png" 640 480
check "... host3 joined and ran tiles; tiles per host add up once" rep "$T/e.json" \
    'H["host3"]["items"] > 0 and any(e["host"] == "host3" and "joined" in e["what"] for e in E) and
     sum(h["items"] for h in R["hosts"]) == R["tiles"]'
[ $rc = 0 ] || sed 's/^/#   /' "$T/e.err" | tail -5
python3 -c 'import json, sys; R = json.load(open(sys.argv[1]))
print("# add run: %.1f s, tiles per host %s" % (R["makespan_s"], {h["name"]: h["items"] for h in R["hosts"]}))' "$T/e.json"

check "no task is left" wait_for 10 bash -c '[ "$("$0" ps -a --json | grep -c "\"tid\"")" = 0 ]' "$VMCTL"
check "halt" "$VMCTL" halt
