#!/bin/bash
# Ctrl-C stops long work cleanly (docs/reliability.md): SIGINT during a long simulation gives
# exit 130, the message "interrupted; no output written", no stdout, and no --out file.
# Usage: interrupt.sh BUDGET_MATCH SCRATCH_DIR
set -u
exe=$1
dir=$2
mkdir -p "$dir"
rm -f "$dir/interrupt.out" "$dir/interrupt.err"
"$exe" attention --dist exp:mean=600 --samples 4000000000 --method simulation >"$dir/interrupt.out" 2>"$dir/interrupt.err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" -ne 130 ]; then echo "exit code $rc, expected 130"; cat "$dir/interrupt.err"; exit 1; fi
if ! grep -q "interrupted; no output written" "$dir/interrupt.err"; then echo "no message:"; cat "$dir/interrupt.err"; exit 1; fi
if [ -s "$dir/interrupt.out" ]; then echo "stdout is not empty:"; cat "$dir/interrupt.out"; exit 1; fi
echo "ok: exit 130 with the message and no output"
