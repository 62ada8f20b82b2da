#!/usr/bin/env bash
# Runs every fuzz target of Fuzz/Sources for a bounded time each, starting
# from the committed seed corpus; a crash, timeout or memory blow-up fails.
set -euo pipefail
FUZZER="$1"
SECONDS_EACH="${2:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d /tmp/afn-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
for target in 0 1 2 3 4 5 6 7 8; do
    echo "==> fuzz target $target for ${SECONDS_EACH}s"
    mkdir -p "$work/corpus-$target"
    FUZZ_TARGET=$target "$FUZZER" -max_total_time="$SECONDS_EACH" -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus-$target" "$root/Fuzz/corpus" 2>&1 \
        | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==|SUMMARY|Done)" || true
    if ls "$work"/crash-* "$work"/timeout-* "$work"/oom-* >/dev/null 2>&1; then
        echo "fuzz target $target found a problem; artifacts:" >&2
        ls "$work"/crash-* "$work"/timeout-* "$work"/oom-* 2>/dev/null >&2
        exit 1
    fi
done
echo "fuzzing finished: no crash, timeout or out-of-memory"
