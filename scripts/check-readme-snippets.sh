#!/usr/bin/env bash
# Compiles every ```swift block of README.md to SIL against the built modules,
# by the same rules as Tests/AFNetworkingTests/Documentation/ReadmeSnippetTests.swift
# (which `make test` runs): each block is its own main.swift, except a block
# preceded by the line `<!-- snippet: continues -->`, which is appended to the
# previous one. Blocks that are not Swift programs are fenced ```sh.
#
#   scripts/check-readme-snippets.sh [BUILD_DIR]    # default .build/debug (after `swift build`)
#
# SWIFTC picks the compiler (default: swiftc on the PATH); SNIPPET_TIMEOUT
# bounds each run in seconds (default 120).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/.build/debug}"
swiftc="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"

if [[ ! -e "$build/Modules/AFNetworking.swiftmodule" ]]; then
    echo "no $build/Modules/AFNetworking.swiftmodule: run \`swift build\` first" >&2
    exit 2
fi
# -emit-sil, not -typecheck: Swift 6's region-based isolation checks ("sending
# 'x' risks causing data races") run on SIL only. Slower than -typecheck, but
# nothing is optimized or written.
flags=(-emit-sil -o /dev/null -warnings-as-errors -swift-version 6 -I "$build/Modules")
# The module maps SwiftPM generates for C targets, among them the package's
# shims (CAFCurl, CAFOpenSSL, CAFSystem) that the AFNetworking module imports.
for map in "$build"/*.build/module.modulemap; do
    if [[ -e "$map" ]]; then flags+=(-Xcc "-fmodule-map-file=$map"); fi
done

work="$(mktemp -d /tmp/readme-snippets.XXXXXX)"
trap 'rm -rf "$work"' EXIT
flags+=(-module-cache-path "$work/ModuleCache")   # shared by the snippets: only the first run fills it

# One directory per snippet, named after the README line its fence opens on.
awk -v out="$work" '
    /^```swift[[:space:]]*$/ && !inside {
        inside = 1
        if (previous != "<!-- snippet: continues -->" || dir == "") {
            dir = out "/line-" sprintf("%04d", NR)
            system("mkdir -p \"" dir "\"")
        }
        next
    }
    /^```/ && inside { inside = 0; previous = $0; next }
    inside { print >> (dir "/main.swift"); close(dir "/main.swift"); next }
    /[^[:space:]]/ { previous = $0 }
' "$root/README.md"

failed=0
count=0
for dir in "$work"/line-*; do
    [[ -d "$dir" ]] || continue
    count=$((count + 1))
    line="${dir##*/line-}"
    if output="$(cd "$dir" && timeout "${SNIPPET_TIMEOUT:-120}" "$swiftc" "${flags[@]}" main.swift 2>&1)"; then
        echo "ok      README.md:$((10#$line))"
    else
        failed=$((failed + 1))
        echo "FAILED  README.md:$((10#$line))"
        echo "$output" | sed 's/^/    /'
    fi
done
echo "$count snippets, $failed failed"
[[ $failed -eq 0 ]]
