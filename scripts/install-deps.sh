#!/usr/bin/env bash
# Installs the system packages a make target needs (Debian). As root it runs
# apt-get; otherwise it prints the exact command and stops.
set -euo pipefail

# libpsl-dev: the public suffix list for cookie Domain checks (the CPSL target);
# zlib1g-dev, libbrotli-dev, libzstd-dev: the content decoders (CAFCompression).
packages=(libcurl4-openssl-dev libssl-dev libpsl-dev zlib1g-dev libbrotli-dev libzstd-dev openssl gzip nginx-light python3-httpbin gunicorn tinyproxy dante-server iproute2 util-linux)
# `install-deps.sh bench`: also valgrind (instructions per request) and
# binutils' strip (valgrind cannot read Swift 6.3's debug sections).
if [[ "${1:-}" == bench ]]; then packages+=(valgrind binutils); fi
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        # nginx-light, nginx-core or nginx-full all provide the nginx binary.
        if [[ "$package" == nginx-light ]] && command -v nginx >/dev/null 2>&1; then continue; fi
        missing+=("$package")
    fi
done

if ((${#missing[@]} == 0)); then
    exit 0
fi

command="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
    echo "==> installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # The Debian package starts a system nginx on port 80; the project's fixtures
    # start their own on free ports, so the system one is not needed.
    # Likewise tinyproxy and danted (the proxy fixtures start their own).
    if command -v service >/dev/null 2>&1; then
        for daemon in nginx tinyproxy danted; do service "$daemon" stop >/dev/null 2>&1 || true; done
    fi
else
    echo "Missing system packages: ${missing[*]}" >&2
    echo "Run as root:  sudo sh -c '$command'" >&2
    exit 1
fi
