#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) and exits non-zero if one crashes,
# hangs, or runs out of memory. Usage, from anywhere:
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Environment:
#   JOBS=N           targets run N at a time (default 1; each uses one core)
#   FUZZ_WORK=DIR    the growing corpora, logs and crash artifacts (default /tmp/neardup-fuzz);
#                    the committed seeds in fuzz/corpus/<target>/ are read, never written
#   TOOLCHAIN=NAME   the toolchain for cargo-fuzz (default nightly: -Zsanitizer needs it)
#   SANITIZER=NAME   address (default), none, ...; none is ~2x faster and still catches
#                    panics, hangs and memory blow-ups, which is what safe Rust can have
#   CARGO_TARGET_DIR where to build (default /tmp/neardup-fuzz/target)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(jsonl csv tsv lines gzip round_trip shingle)
fi
work="${FUZZ_WORK:-/tmp/neardup-fuzz}"
toolchain="${TOOLCHAIN:-nightly}"
sanitizer="${SANITIZER:-address}"
jobs="${JOBS:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}"
mkdir -p "$work/logs"

cd "$here"
# Release code with debug assertions (overflow checks) on. Built once; the binaries are
# then run directly, so editing the sources while they run does not rebuild anything.
cargo +"$toolchain" fuzz build -O --debug-assertions --sanitizer "$sanitizer" \
    >"$work/logs/build.log" 2>&1 || { tail -30 "$work/logs/build.log"; exit 2; }
triple="$(rustc +"$toolchain" -vV | sed -n 's/^host: //p')"
bin="$CARGO_TARGET_DIR/$triple/release"

run_one() {
    local t="$1"
    local corpus="$work/corpus/$t" artifacts="$work/artifacts/$t" log="$work/logs/$t.log"
    mkdir -p "$corpus" "$artifacts"
    # New inputs go to the first corpus directory; the committed seeds are only read.
    if "$bin/$t" "$corpus" "corpus/$t" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1; then
        local runs
        runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
        echo "ok    $t: ${seconds}s, $runs executions ($(find "$corpus" -type f | wc -l) corpus inputs)"
    else
        echo "FAIL  $t: see $log and $artifacts/"
        grep -m5 -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | sed 's/^/      /'
        return 1
    fi
}

status=0
pids=()
for t in "${targets[@]}"; do
    run_one "$t" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do
    wait "$p" || status=1
done
exit $status
