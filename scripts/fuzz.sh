#!/usr/bin/env bash
# Runs every fuzz target of Fuzz/Sources for a bounded time each, starting
# from the committed seed corpus; a crash, timeout or memory blow-up fails.
set -uo pipefail
FUZZER="$1"
SECONDS_EACH="${2:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d /tmp/afn-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Let libFuzzer, not the sanitizer runtime, handle signals, so that every
# finding is saved as an artifact and reported.
export UBSAN_OPTIONS="handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0"
# Swift's own crash backtracer would otherwise take the signal first.
export SWIFT_BACKTRACE="enable=no"
failed=0
for target in 0 1 2 3 4 5 6 7 8; do
    echo "==> fuzz target $target for ${SECONDS_EACH}s"
    mkdir -p "$work/corpus-$target"
    FUZZ_TARGET=$target "$FUZZER" -max_total_time="$SECONDS_EACH" -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix="$work/target-$target-" -print_final_stats=1 "$work/corpus-$target" "$root/Fuzz/corpus" \
        >"$work/log-$target" 2>&1
    status=$?
    grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==|SUMMARY|artifact_prefix)" "$work/log-$target" | head -12
    if [[ $status -ne 0 ]]; then
        echo "fuzz target $target FAILED (exit $status)" >&2
        tail -30 "$work/log-$target" >&2
        for artifact in "$work"/target-"$target"-*; do
            [[ -f "$artifact" ]] && { echo "input (base64): $(base64 -w0 "$artifact")" >&2; cp "$artifact" "$root/.build-fuzz/" 2>/dev/null || true; }
        done
        failed=1
    fi
done
if [[ $failed -ne 0 ]]; then exit 1; fi
echo "fuzzing finished: no crash, timeout or out-of-memory"
