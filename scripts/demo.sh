#!/usr/bin/env bash
# make demo: a local nginx with a few resources, then `afn demo` against it.
set -euo pipefail
AFN="$1"
source "$(dirname "$0")/nginx-fixture.sh"

dir=$(mktemp -d /tmp/afn-demo.XXXXXX)
nginx_start "$dir"
for name in users posts comments likes; do
    printf '{"resource":"%s","items":[1,2,3]}\n' "$name" >"$dir/www/$name.json"
done
head -c $((64 * 1024 * 1024)) /dev/urandom >"$dir/www/archive.bin"

echo "==> local nginx on http://127.0.0.1:$NGINX_PORT"
"$AFN" demo --base "http://127.0.0.1:$NGINX_PORT" --output "$dir/archive.download"
