#!/usr/bin/env bash
# Run every test: the cmocka unit binaries of each build directory given,
# then the integration scripts (tests/integ/test_*.sh) against each build's
# vmd, vmctl, vmrun and examples.  Prints each summary and a final "N passed, N failed" line;
# exits non-zero if anything failed.
#
#   tests/run.sh [--unit-only|--integ-only] BUILD_DIR...
set -u
cd "$(dirname "$0")/.." || exit 2

mode=all
case "${1:-}" in
--unit-only) mode=unit; shift ;;
--integ-only) mode=integ; shift ;;
esac
[ $# -gt 0 ] || set -- build

passed=0 failed=0 skipped=0
failures=()

run_unit() {
    local dir=$1 t out p f
    for t in "$dir"/tests/test_*; do
        [ -x "$t" ] || continue
        # A binary left behind by a renamed or deleted test is not a test.
        [ -f "tests/unit/$(basename "$t").c" ] || continue
        echo "== unit $(basename "$t") ($dir)"
        out=$(timeout 600 "$t" 2>&1)
        local rc=$?
        printf '%s\n' "$out" | grep -E '^\[ *(PASSED|FAILED|SKIPPED|ERROR) *\]|^\[==========\]|FAIL|Test failed|ERROR|runtime error|Sanitizer' | head -40
        p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
        f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
        s=$(printf '%s\n' "$out" | grep -c '^\[  SKIPPED \]')
        passed=$((passed + ${p:-0}))
        failed=$((failed + ${f:-0}))
        skipped=$((skipped + s))
        if [ $rc -ne 0 ] && [ "${f:-0}" = 0 ]; then
            # Crashed or aborted before its summary: count the binary as failed.
            printf '%s\n' "$out" | tail -20
            failed=$((failed + 1))
        fi
        [ $rc -eq 0 ] || failures+=("$dir/$(basename "$t")")
    done
}

run_integ() {
    local dir=$1 t out rc p f s
    local bin
    bin=$(cd "$dir/bin" && pwd)
    for t in tests/integ/test_*.sh; do
        [ -f "$t" ] || continue
        echo "== integ $(basename "$t" .sh) ($dir)"
        local sanlog t0=$SECONDS
        sanlog=$(mktemp -d /tmp/lvm-san.XXXXXX)
        out=$(VMD="$bin/vmd" VMCTL="$bin/vmctl" VMRUN="$bin/vmrun" EXAMPLES="$bin/../examples" \
              ASAN_OPTIONS="log_path=$sanlog/asan" \
              UBSAN_OPTIONS="log_path=$sanlog/ubsan:print_stacktrace=1" \
              timeout 600 bash "$t" 2>&1)
        rc=$?
        printf '%s\n' "$out" | grep -E '^(ok|not ok|# SKIP|#)'
        # What a failed check printed (a program's error, its output) is not
        # TAP: show its last lines too, or a CI log says only that it failed.
        if printf '%s\n' "$out" | grep -q '^not ok '; then
            echo "# --- the last lines it printed outside the TAP stream:"
            printf '%s\n' "$out" | grep -vE '^(ok|not ok|#)' | tail -40 | sed 's/^/#   /'
        fi
        p=$(printf '%s\n' "$out" | grep -c '^ok ')
        f=$(printf '%s\n' "$out" | grep -c '^not ok ')
        s=$(printf '%s\n' "$out" | grep -c '^# SKIP')
        if ls "$sanlog"/* >/dev/null 2>&1; then
            echo "not ok - sanitizer reports from daemons:"
            cat "$sanlog"/* | head -60
            f=$((f + 1))
        fi
        rm -rf "$sanlog"
        echo "# $(basename "$t" .sh) took $((SECONDS - t0)) s"
        if [ $rc -ne 0 ] && [ "$f" = 0 ]; then
            printf '%s\n' "$out" | tail -30
            echo "not ok - $(basename "$t") exited with status $rc"
            f=1
        fi
        passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
        [ "$f" = 0 ] || failures+=("$dir/$(basename "$t")")
    done
}

for d in "$@"; do
    [ "$mode" = integ ] || run_unit "$d"
done
for d in "$@"; do
    [ "$mode" = unit ] || run_integ "$d"
done

echo
if [ ${#failures[@]} -gt 0 ]; then
    echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
