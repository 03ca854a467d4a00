#!/usr/bin/env bash
# A job survives its master's death (issue 26, "--resume DIR"): on a local
# VM of 3 daemons, a job with --checkpoint DIR writes its checkpoints to
# disk; kill -9 of its master (vmrun stencil, then the heat3d example) once
# a file is there leaves no worker behind (they leave on their own within
# seconds), and the same command with --resume DIR goes on from the file to
# the reference's bits (--verify), on other hosts and quanta too, and a
# program stopped by its until rule stops at the same iteration.  A
# damaged, truncated or another job's checkpoint is refused with a clear
# error and exit 2; a recovery that loses quanta with no copy left goes on
# from the disk.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON report"
# Its jobs of 1200 iterations take minutes under the sanitizers; the file
# reader runs under them in test_liq_ckfile and fuzz_ckfile.
sanitized "$VMRUN" &&
    skip_all "sanitizer build (resumes run in the plain build; test_liq_ckfile and fuzz_ckfile cover the file under ASan)"

JOB=
cleanup_extra() { [ -z "$JOB" ] || kill -9 "$JOB" 2>/dev/null; }
write_conf 1.5
CK=$T/ck
mkdir -p "$CK"

check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

# The job's workers alive now (vmrun's or a program's), one pid a line.
workers() { "$VMCTL" ps -a | awk '$3 != "-" && NR > 1 { print $4 }'; }
no_workers() { [ -z "$(workers)" ]; }

# r EXPR: a Python condition on the JSON report (R), D its disk checkpoints.
r() {
    python3 - "$1" "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[2]))
D, C, F = R["disk_checkpoints"], R["checkpoints"], R["failures"]
E, EP = R["balance"]["epochs"], R["balance"]["epoch"]
sys.exit(0 if eval(sys.argv[1]) else 1)
EOF
}

# The file's iteration (offset 16, little-endian int).
file_iter() {
    python3 -c 'import struct,sys; print(struct.unpack_from("<i", open(sys.argv[1],"rb").read(), 16)[0])' \
        "$CK/checkpoint.lqc"
}

ARGS=(--grid 48 --iters 1200 --heavy 100 --probe-seconds 0.05 --checkpoint-every 2
      --checkpoint "$CK" --checkpoint-interval 0)
ARGS_LONG=("${ARGS[@]}")

# kill_and_resume WHAT PROG...: run the job, kill -9 its master once a
# disk checkpoint exists, then check the workers leave and resume.
kill_and_resume() {
    local what=$1
    shift
    rm -f "$CK"/checkpoint.lqc
    "$@" "${ARGS[@]}" >"$T/job.out" 2>"$T/job.err" &
    JOB=$!
    check "$what: a disk checkpoint is written during the job" \
        wait_for 60 test -s "$CK/checkpoint.lqc"
    sleep 0.3
    check "$what: the master is killed while the job runs" kill -9 "$JOB"
    wait "$JOB" 2>/dev/null
    JOB=
    local it t0
    it=$(file_iter)
    check "$what: ... after the checkpoint of iteration $it was written (0 < $it < 1200)" \
        [ "$it" -gt 0 -a "$it" -lt 1200 ]
    t0=$(date +%s.%N)
    # Left to themselves they would run the job to its end (seconds more).
    check "$what: its workers leave on their own within 1 s" wait_for 1 no_workers
    echo "# $what: the workers were gone $(python3 -c "import sys,time; print(round(time.time() - float(sys.argv[1]), 2))" "$t0") s after the master's death was seen"
    local t0=$SECONDS
    "$@" "${ARGS[@]}" --resume "$CK" --verify --json "$T/job.json" >"$T/job.out" 2>"$T/job.err"
    RC=$?
    [ $RC = 0 ] || sed 's/^/#   /' "$T/job.err" | tail -15
    echo "# $what: resumed run took $((SECONDS - t0)) s"
    check "$what: the same command with --resume exits 0 (exit $RC)" [ $RC = 0 ]
    check "$what: the final field is bit-identical to the single-process reference" \
        grep -q "bit-identical to the single-process reference" "$T/job.out"
    check "$what: it went on from the file's iteration ($it or later)" \
        r "D['resumed_from'] >= $it and D['resumed_from'] % C['every_iterations'] == 0"
    check "$what: the report's epochs are this run's, from the checkpoint on (none before it)" \
        r "len(E) > 0 and min(e['epoch'] for e in E) > D['resumed_from'] // EP and all(e['be'] > 0 for e in E)"
    check "$what: the report counts the disk writes, their bytes and time" \
        r "D['on'] and D['writes'] >= 1 and D['bytes'] > 48**3 * 8 and D['seconds'] > 0 and D['failed_writes'] == 0"
    # A master killed while writing leaves its temporary file; the next
    # write replaces it.
    check "$what: the resumed job's writes leave no temporary file" \
        bash -c '[ "$(ls -A "$0")" = checkpoint.lqc ]' "$CK"
    check "$what: the summary has a resume and a disk line" bash -c \
        'grep -q "^resume: from the disk checkpoint of iteration" "$0" &&
         grep -q "^disk checkpoints: [1-9]" "$0"' "$T/job.out"
}

# 1. vmrun stencil.
kill_and_resume "vmrun stencil" "$VMRUN" stencil

# 2. A program of its own (liquid.h): heat3d.
if [ -x "$EXAMPLES/heat3d" ]; then
    kill_and_resume "heat3d" "$EXAMPLES/heat3d"
    HEAT_CK=$T/heat.lqc
    cp "$CK/checkpoint.lqc" "$HEAT_CK"
else
    echo "# $EXAMPLES/heat3d is not built: its case is left out"
fi

# 2b. A program whose until rule stops it (laplace2d): resumed from its
# last checkpoint, it stops at the same iteration with the same bits.
if [ -x "$EXAMPLES/laplace2d" ]; then
    rm -f "$CK/checkpoint.lqc"
    LAP=(--iters 3000 --tol 1e-4 --probe-seconds 0.05 --checkpoint-every 5 --verify)
    "$EXAMPLES/laplace2d" "${LAP[@]}" --checkpoint "$CK" --checkpoint-interval 0 \
        >"$T/job.out" 2>"$T/job.err"
    RC=$?
    stop=$(grep -o '[0-9]* of 3000 iterations (its until rule stopped it)' "$T/job.out" | cut -d' ' -f1)
    check "laplace2d: its until rule stops it at iteration ${stop:-?} of 3000 (exit $RC)" \
        [ $RC = 0 -a -n "$stop" ]
    it=$(file_iter)
    "$EXAMPLES/laplace2d" "${LAP[@]}" --resume "$CK" >"$T/job.out" 2>"$T/job.err"
    RC=$?
    check "laplace2d: resumed from iteration $it, exit 0 (exit $RC)" [ $RC = 0 ]
    check "laplace2d: ... stops at the same iteration, bit-identical to the reference" \
        bash -c 'grep -q "^job: laplace2d .*, $1 of 3000 iterations (its until rule" "$0" &&
                 grep -q "bit-identical to the single-process reference" "$0"' "$T/job.out" "$stop"
fi

# 3. Refusals: exit 2, a clear message, before any worker starts.
refused() {
    "$VMRUN" stencil "${ARGS[@]}" --resume "$CK" >"$T/job.out" 2>"$T/job.err"
    RC=$?
    check "$1: refused with exit 2 (exit $RC)" [ $RC = 2 ]
    check "$1: the error says: $2" grep -q -- "$2" "$T/job.err"
}
GOOD=$T/good.lqc
"$VMRUN" stencil --grid 48 --iters 1200 --probe-seconds 0.05 --checkpoint-every 2 \
    --checkpoint "$CK" --checkpoint-interval 0 --iters 200 >/dev/null 2>&1
check "a short job leaves a checkpoint" test -s "$CK/checkpoint.lqc"
cp "$CK/checkpoint.lqc" "$GOOD"

# The file holds the whole grid: a job may go on with other hosts, quanta
# and workers (the host that was lost with the master stays away).
"$VMRUN" stencil --grid 48 --iters 200 --probe-seconds 0.05 --checkpoint-every 2 \
    --resume "$CK" --hosts host0,host1 --tasks-per-host 2 --quanta 5 --verify \
    >"$T/job.out" 2>"$T/job.err"
RC=$?
check "resumed on 2 of the 3 hosts, 4 workers, other quanta: exit 0 (exit $RC)" [ $RC = 0 ]
check "... 10 quanta on 4 workers, from the file's iteration" bash -c \
    'grep -q "10 quanta (.*) on 4 workers" "$0" && grep -q "^resume: from the disk checkpoint" "$0"' \
    "$T/job.out"
check "... bit-identical to the single-process reference" \
    grep -q "bit-identical to the single-process reference" "$T/job.out"
cp "$GOOD" "$CK/checkpoint.lqc"

refused "a job of other iterations" "another job: iterations 200 there, 1200 here"
python3 - "$GOOD" "$CK/checkpoint.lqc" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-100] ^= 1
open(sys.argv[2], "wb").write(b)
EOF
ARGS=(--grid 48 --iters 200 --probe-seconds 0.05 --checkpoint-every 2 --checkpoint "$CK")
refused "one bit of the field flipped" "checksum of its .* bytes of field is wrong"
head -c 5000 "$GOOD" >"$CK/checkpoint.lqc"
refused "a truncated file" "truncated: 5000 bytes"
python3 - "$GOOD" "$CK/checkpoint.lqc" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[20] ^= 0x40
open(sys.argv[2], "wb").write(b)
EOF
refused "a damaged header" "its header's checksum is wrong"
# Whole by its checksums, but saying what no writer would (ckforge.py sets
# header fields and computes both checksums again).
ITER=$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 16)[0])' "$GOOD")
python3 "$(dirname "$0")/../tools/ckforge.py" "$GOOD" "$CK/checkpoint.lqc" 16=$((ITER + 1))
refused "an iteration between its checkpoints, checksums right" "does not hold together"
python3 "$(dirname "$0")/../tools/ckforge.py" "$GOOD" "$CK/checkpoint.lqc" 20=0x7fffffff
refused "checkpoints every 2^31-1 iterations, checksums right" "does not hold together"
check "--resume of a missing folder, or of the file itself: said so, naming --resume (exit 2)" bash -c '
    "$0" stencil --grid 16 --resume "$1/none" 2>"$1/r.err"; [ $? = 2 ] &&
    grep -q -- "--resume $1/none: no such directory" "$1/r.err" &&
    "$0" stencil --grid 16 --resume "$2/checkpoint.lqc" 2>"$1/r.err"; [ $? = 2 ] &&
    grep -q -- "--resume $2/checkpoint.lqc: not a directory" "$1/r.err"' "$VMRUN" "$T" "$CK"
echo "not a checkpoint" >"$CK/checkpoint.lqc"
refused "another kind of file" "not a liquid checkpoint"
rm -f "$CK/checkpoint.lqc"
refused "no file" "no checkpoint there"
cp "$GOOD" "$CK/checkpoint.lqc"
ARGS=(--grid 40 --iters 200 --probe-seconds 0.05 --checkpoint "$CK")
refused "another grid" "another job: grid 48x48x48 there, 40x40x40 here"
ARGS=(--grid 48 --iters 200 --probe-seconds 0.05 --kernel rbgs --checkpoint "$CK")
refused "another kernel" "another job: kernel jacobi there, rbgs here"
if [ -n "${HEAT_CK:-}" ]; then
    cp "$HEAT_CK" "$CK/checkpoint.lqc"
    ARGS=(--grid 48 --iters 1200 --probe-seconds 0.05 --checkpoint "$CK")
    refused "a program's checkpoint given to vmrun stencil" "another job: program heat3d there, stencil here"
fi
"$VMRUN" stencil --grid 48 --checkpoint "$T/none" >"$T/job.out" 2>"$T/job.err"
RC=$?
check "--checkpoint to a missing directory: exit 2 (exit $RC)" [ $RC = 2 ]
check "... saying so" grep -q "no such directory" "$T/job.err"
check "no worker is left after the refusals" wait_for 10 no_workers

# 4. Every worker but one killed at once: the quanta whose copies were all
# on the two goes on from the disk checkpoint, to the same bits.
ARGS=("${ARGS_LONG[@]}")
rm -f "$CK/checkpoint.lqc"
"$VMRUN" stencil "${ARGS[@]}" --balance off --verify --json "$T/job.json" \
    >"$T/job.out" 2>"$T/job.err" &
JOB=$!
DISK_OK=0
check "disk fallback: a disk checkpoint is written" wait_for 60 test -s "$CK/checkpoint.lqc" &&
    DISK_OK=1 || { ls -la "$CK" | sed 's/^/#   /'; tail -5 "$T/job.err" | sed 's/^/#   /'; }
pids=$(workers | head -2)
check "disk fallback: two workers run (pids $(echo $pids))" [ "$(echo $pids | wc -w)" = 2 ]
kill -9 $pids
wait "$JOB"
RC=$?
JOB=
[ $RC = 0 ] || sed 's/^/#   /' "$T/job.err" | tail -15
check "disk fallback: the job exits 0 (exit $RC)" [ $RC = 0 ]
check "disk fallback: the final field is bit-identical to the single-process reference" \
    grep -q "bit-identical to the single-process reference" "$T/job.out"
# A checkpoint may complete between the two deaths' notices (the survivor
# then holds every copy): the job recovers from memory, and says nothing
# of quanta lost.
from_disk() {
    r "(D['recoveries_from_disk'] == 1 and D['recovered_from'] > 0 and
        any(f['back_to'] == D['recovered_from'] for f in F))" &&
        grep -q "quant.* lost .*going on from the disk checkpoint of iteration" "$T/job.err" &&
        grep -q "^recovery from disk: 1 time" "$T/job.out"
}
from_memory() { r "D['recoveries_from_disk'] == 0" && ! grep -q " lost (" "$T/job.err"; }
check "disk fallback: the job went on from the disk (report and stderr), or lost no quantum" \
    eval 'from_disk || from_memory'
echo "# disk fallback: $(grep -o 'recoveries_from_disk":[0-9]*' "$T/job.json")"
[ $DISK_OK = 1 ] || { grep -o '"disk_checkpoints":{[^}]*}' "$T/job.json"; grep "^disk checkpoints" "$T/job.out"; } |
    sed 's/^/#   /' 

echo "1..$_n"
[ "$_failed" = 0 ]
