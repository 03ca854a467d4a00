#!/usr/bin/env bash
# Robustness of task traffic (issue 3): a task sending faster than a peer
# host, or a local task, takes its messages is paused at max_peer_queue
# instead of losing any or growing the daemon without bound; PvmTaskExit
# watchers of a task whose host dies get their notices.
. "$(dirname "$0")/lib.sh"
P=$(dirname "$VMCTL")/../tests/integ/pvm_direct
[ -x "$P" ] || skip_all "pvm_direct is not built"
# A long host_timeout: host1's daemon is stopped for a while on purpose.
write_conf 60 'limits = { max_message = 1048576; max_peer_queue = 2097152; };'
check "start a local VM of 2 hosts, max_peer_queue 2 MiB" "$VMCTL" start --local 2 -c "$T/test.conf"
LOG0=$LIQUIDVM_HOME/logs/host0.log
gone() { ! kill -0 "$1" 2>/dev/null; }

LIQUIDVM_HOST=host1 "$P" sink 1 allow >"$T/sink" 2>&1 &
SINK=$!
check "a sink on host1" wait_for 10 test -s "$T/sink"
D1=$(vmd_pid_of host1)
# host1's daemon stops reading: host0's queue for it fills.
kill -STOP "$D1"
LIQUIDVM_HOST=host0 "$P" send "$(head -1 "$T/sink")" 600 allow >"$T/send" 2>&1 &
SEND=$!
check "the sender is paused once 2 MiB wait for host1 (host0's log)" \
    wait_for 60 grep -q "paused: .* wait for host 2" "$LOG0"
check "... and stays blocked in pvm_send, alive" kill -0 $SEND
kill -CONT "$D1"
check "once host1 reads again the sender resumes and finishes" wait_for 120 gone $SEND
wait $SEND; rc=$?
check "... with status 0" test $rc = 0
check "... resumed (host0's log)" grep -q "resumed" "$LOG0"
wait_for 30 gone $SINK
wait $SINK; rc=$?
check "the sink got all 600 messages, in order and intact" \
    bash -c '[ $0 = 0 ] && grep -q "^ok sink: 600 messages" "$1"' $rc "$T/sink"
check "no message was dropped (host0's log)" bash -c '! grep -q "dropped\|cannot forward" "$0"' "$LOG0"

# The same on one host: the reader itself is stopped and reads nothing.
LIQUIDVM_HOST=host0 "$P" sink 1 allow >"$T/sink2" 2>&1 &
SINK=$!
check "a sink on host0" wait_for 10 test -s "$T/sink2"
kill -STOP $SINK
LIQUIDVM_HOST=host0 "$P" send "$(head -1 "$T/sink2")" 600 allow >"$T/send2" 2>&1 &
SEND=$!
check "a sender to a local task that reads nothing is paused at 2 MiB unread" \
    wait_for 60 grep -q "paused: .* wait for task $(head -1 "$T/sink2")" "$LOG0"
check "... and stays blocked in pvm_send, alive" kill -0 $SEND
kill -CONT $SINK
check "once the reader reads again the sender finishes" wait_for 120 gone $SEND
wait $SEND; rc=$?
check "... with status 0" test $rc = 0
wait_for 30 gone $SINK
wait $SINK; rc=$?
check "the local sink got all 600 messages, in order and intact" \
    bash -c '[ $0 = 0 ] && grep -q "^ok sink: 600 messages" "$1"' $rc "$T/sink2"

# A watcher on host0 of a task on host1; host1's daemon dies.
LIQUIDVM_HOST=host1 "$P" echo allow >"$T/echo" 2>&1 &
ECHO=$!
check "a task on host1" wait_for 10 test -s "$T/echo"
LIQUIDVM_HOST=host0 "$P" watch "$(head -1 "$T/echo")" >"$T/watch" 2>&1 &
WATCH=$!
check "a task on host0 watches it (PvmTaskExit)" wait_for 10 grep -q watching "$T/watch"
kill -9 "$(vmd_pid_of host1)"
check "host1's daemon dies: the watcher gets its exit notice" \
    wait_for 20 grep -q "^ok exit notice for $(head -1 "$T/echo")" "$T/watch"
wait_for 10 gone $WATCH || kill -9 $WATCH
wait_for 10 gone $ECHO || kill -9 $ECHO
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
