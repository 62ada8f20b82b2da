#!/usr/bin/env bash
# make bench: a local nginx, the C libcurl baseline, curl, afn-bench and the
# peers (AsyncHTTPClient, URLSession), run alternately; medians and ratios
# printed by scripts/bench.py.
#   scripts/bench.sh AFN_BENCH [AFN_PEERS]
set -euo pipefail
BENCH="$1"
PEERS="${2:-}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
source "$here/nginx-fixture.sh"

gcc -O2 -o "$root/Benchmarks/C/baseline" "$root/Benchmarks/C/baseline.c" -lcurl

dir=$(mktemp -d /tmp/afn-bench.XXXXXX)
nginx_start "$dir"
head -c 1024 /dev/urandom >"$dir/www/1k.bin"
echo "==> creating the 512 MiB file for S3"
head -c $((512 * 1024 * 1024)) /dev/zero >"$dir/www/512m.bin"
echo "==> creating the 1 GiB file for S4"
head -c $((1024 * 1024 * 1024)) /dev/zero >"$dir/upload-1g.bin"

python3 "$here/bench.py" \
    --baseline "$root/Benchmarks/C/baseline" --swift "$BENCH" --peers "$PEERS" \
    --url "http://127.0.0.1:$NGINX_PORT" --scratch "$dir" \
    --runs "${BENCH_RUNS:-5}"
