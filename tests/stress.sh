#!/usr/bin/env bash
# Is the suite green every time? Clone this repository afresh, load both cores with busy loops,
# and run `make test` RUNS times in a row (each run in a new random order: pytest-randomly).
# Usage: tests/stress.sh [RUNS]   (default 10; `make test-stress` runs it)
set -uo pipefail
runs=${1:-10}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d)
busy=()
cleanup() {
    [ "${#busy[@]}" -gt 0 ] && kill "${busy[@]}" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

git clone --quiet "$repo" "$work/clone"
echo "Fresh clone of $(git -C "$work/clone" rev-parse --short HEAD) in $work/clone"
for _ in 1 2; do  # one busy loop per core of a 2-core machine
    sh -c 'while :; do :; done' &
    busy+=($!)
done
echo "Busy loops: pids ${busy[*]}"

passed=0
failed=0
for i in $(seq 1 "$runs"); do
    log="$work/run-$i.log"
    start=$(date +%s)
    if make -C "$work/clone" test >"$log" 2>&1; then
        passed=$((passed + 1)); verdict=green
    else
        failed=$((failed + 1)); verdict=RED
        mkdir -p "$repo/stress-logs" && cp "$log" "$repo/stress-logs/run-$i.log"
    fi
    seed=$(grep -o -m1 'randomly-seed=[0-9]*' "$log" || true)
    summary=$(grep -E '^=+ .*(passed|failed).* =+$' "$log" | tail -1 | tr -d '=')
    echo "run $i/$runs: $verdict in $(( $(date +%s) - start )) s ($seed;$summary)"
done
echo "stress: $passed of $runs runs green under load"
[ "$failed" -eq 0 ]
