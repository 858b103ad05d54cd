#!/usr/bin/env bash
# Run a command and say how long it took against its budget: timed.sh NAME MINUTES CMD...
# The command's exit status is kept; a run over its budget is said, not failed (CI's own
# limit is what fails it).
set -uo pipefail
name=$1 budget_min=$2
shift 2
start=$SECONDS
"$@"
status=$?
elapsed=$((SECONDS - start))
verdict="within"
[ "$elapsed" -le $((budget_min * 60)) ] || verdict="OVER"
printf '%s: %d min %02d s, %s its budget of %d min (exit status %d)\n' \
  "$name" $((elapsed / 60)) $((elapsed % 60)) "$verdict" "$budget_min" "$status"
exit "$status"
