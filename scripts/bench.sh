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
nginx_start "$dir" tls
head -c 1024 /dev/urandom >"$dir/www/1k.bin"
head -c 1 /dev/urandom >"$dir/www/1b.bin"
# The soak's bodies, 1 KiB to 8 MiB.
for size in 1k:1 2k:2 16k:16 64k:64 256k:256 512k:512 1m:1024 2m:2048 4m:4096 8m:8192; do
    head -c $((${size#*:} * 1024)) /dev/urandom >"$dir/www/soak-${size%%:*}.bin"
done
only=",${BENCH_ONLY:-s3,s4},"
if [[ "$only" == *,s3,* ]]; then
    echo "==> creating the 512 MiB file for S3"
    head -c $((512 * 1024 * 1024)) /dev/zero >"$dir/www/512m.bin"
fi
if [[ "$only" == *,s4,* ]]; then
    echo "==> creating the 1 GiB file for S4"
    head -c $((1024 * 1024 * 1024)) /dev/zero >"$dir/upload-1g.bin"
fi

python3 "$here/bench.py" \
    --baseline "$root/Benchmarks/C/baseline" --swift "$BENCH" --peers "$PEERS" \
    --url "http://127.0.0.1:$NGINX_PORT" --scratch "$dir" \
    --h2-url "https://localhost:$NGINX_H2_PORT" --h1-url "https://localhost:$NGINX_H1_PORT" --tls-log "$dir/tls.log" \
    --runs "${BENCH_RUNS:-5}"
