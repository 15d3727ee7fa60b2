#!/usr/bin/env bash
# The suite's reliability under load (issue 30): `make test` N times in a row on a clean clone of
# this checkout's HEAD, while a second clean clone runs the whole suite over and over beside it.
#
#     benchmarks/soak.sh [N] [DIR]      # N defaults to 10, DIR to a new temporary directory
#
# PYTEST_ARGS, if set, is passed to both suites' `make test` (e.g. one file, to try the script).
# Each run's output goes to DIR/main.runK.log (the measured loop) and DIR/beside.runK.log; one line
# per run (exit status, seconds, pytest's last line) to DIR/main.summary and DIR/beside.summary.
# Exits 0 when all N measured runs passed. It takes N times a suite run under load (about 7-9
# minutes each on a 2-core machine). Not part of the test suite.
#
# The whole script is one block that bash reads before it runs any of it, so that editing this file
# during a soak (which runs it from the checkout for an hour) cannot change what the running soak
# does: bash reads a plain script as it goes, and soak7 died at its last lines after an edit.
{
set -u
if [ "${1:-}" = "--beside" ]; then n=0; dir=$2; else
  n=${1:-10}
  dir=${2:-$(mktemp -d /tmp/agent-repl-soak.XXXXXX)}
fi
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
mkdir -p "$dir"
# The clones sit in DIR, so the tests that read ../shared (the shared transcripts and samples) find
# it through a link to the one beside this checkout; without it they are skipped.
[ -d "$repo/../shared" ] && [ ! -e "$dir/shared" ] && ln -s "$(cd "$repo/../shared" && pwd)" "$dir/shared"
[ "${1:-}" = "--beside" ] || echo "soak of $(git -C "$repo" log -1 --format='%h %s' | cut -c1-72) in $dir"

loop() {  # loop NAME RUNS: clone, set up, run the suite RUNS times (0: until DIR/stop exists)
  local name=$1 runs=$2 i=0 start rc
  git clone -q "$repo" "$dir/$name" && make -C "$dir/$name" .venv/.dev-stamp > "$dir/$name.setup.log" 2>&1 || {
    echo "setup failed (see $dir/$name.setup.log)" >> "$dir/$name.summary"; return 1; }
  while [ "$runs" -eq 0 ] || [ "$i" -lt "$runs" ]; do
    [ "$runs" -eq 0 ] && [ -e "$dir/stop" ] && break
    i=$((i + 1)); start=$(date +%s)
    make --no-print-directory -C "$dir/$name" test > "$dir/$name.run$i.log" 2>&1; rc=$?
    echo "run $i rc=$rc $(( $(date +%s) - start ))s $(tail -1 "$dir/$name.run$i.log")" >> "$dir/$name.summary"
  done
}

if [ "${1:-}" = "--beside" ]; then  # the second suite, in a process group of its own
  dir=$2
  loop beside 0
  exit 0
fi

setsid "$0" --beside "$dir" &
beside=$!
loop main "$n"
touch "$dir/stop"
kill -TERM -- "-$beside" 2>/dev/null  # its unfinished run is not counted
wait "$beside" 2>/dev/null
cat "$dir/main.summary"
failed=$(grep -c -v ' rc=0 ' "$dir/main.summary")
echo "measured runs that failed: $failed of $n; the suite beside it: $(grep -c ' rc=0 ' "$dir/beside.summary") passed, $(grep -c -v ' rc=0 ' "$dir/beside.summary") failed"
[ "$failed" -eq 0 ]
exit
}
