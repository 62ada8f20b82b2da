#!/usr/bin/env bash
# Sourced by demo.sh and bench.sh: starts nginx on a free loopback port with a
# generated document root; `nginx_stop` (installed as an EXIT trap) stops it.
set -euo pipefail

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# make_tls_pki DIR: a private CA (DIR/ca.pem, DIR/ca.der) and a leaf for
# localhost and 127.0.0.1 signed by it (DIR/leaf.pem, DIR/leaf.key).
make_tls_pki() {
    local dir="$1"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=afn bench CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$dir/leaf.key" -out "$dir/leaf.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/leaf.ext"
    openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 30 \
        -extfile "$dir/leaf.ext" -out "$dir/leaf.pem" 2>/dev/null
    openssl x509 -in "$dir/ca.pem" -outform DER -out "$dir/ca.der"
}

# nginx_start ROOT_DIR [tls]: serves ROOT_DIR/www; sets NGINX_PORT and
# NGINX_DIR. With "tls", also HTTPS with HTTP/2 on NGINX_H2_PORT and HTTPS
# with HTTP/1.1 only on NGINX_H1_PORT, under a private CA (NGINX_DIR/ca.pem,
# .der); their requests are logged to NGINX_DIR/tls.log with the connection's
# serial number, so a client's connections can be counted.
nginx_start() {
    NGINX_DIR="$1"
    NGINX_PORT=$(free_port)
    mkdir -p "$NGINX_DIR/www" "$NGINX_DIR/tmp"
    # nginx workers run as an unprivileged user: the tree must be readable.
    chmod 755 "$NGINX_DIR" "$NGINX_DIR/www"
    local tls_servers=""
    if [[ "${2:-}" == tls ]]; then
        NGINX_H2_PORT=$(free_port)
        NGINX_H1_PORT=$(free_port)
        make_tls_pki "$NGINX_DIR"
        local port proto
        for port in "$NGINX_H2_PORT" "$NGINX_H1_PORT"; do
            proto=""
            [[ "$port" == "$NGINX_H2_PORT" ]] && proto=" http2"
            tls_servers+="
    server {
        listen 127.0.0.1:$port ssl$proto;
        ssl_certificate $NGINX_DIR/leaf.pem;
        ssl_certificate_key $NGINX_DIR/leaf.key;
        access_log $NGINX_DIR/tls.log connections;
        root $NGINX_DIR/www;
        location /nostore/ {
            alias $NGINX_DIR/www/;
            add_header Cache-Control no-store;
        }
    }"
        done
    fi
    cat >"$NGINX_DIR/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $NGINX_DIR/error.log;
pid $NGINX_DIR/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $NGINX_DIR/tmp;
    proxy_temp_path $NGINX_DIR/tmp;
    fastcgi_temp_path $NGINX_DIR/tmp;
    uwsgi_temp_path $NGINX_DIR/tmp;
    scgi_temp_path $NGINX_DIR/tmp;
    keepalive_requests 10000000;
    sendfile on;
    types { application/json json; application/octet-stream bin; text/plain txt; }
    log_format connections '\$server_port \$connection \$server_protocol';
    # Many streams per HTTP/2 connection, as a load balancer allows.
    http2_max_concurrent_streams 256;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $NGINX_DIR/www;
        # The same 1 KiB file as an API would serve it (not storable), and as
        # a static asset fresh for an hour.
        location /nostore/ {
            alias $NGINX_DIR/www/;
            add_header Cache-Control no-store;
        }
        location /fresh/ {
            alias $NGINX_DIR/www/;
            add_header Cache-Control "max-age=3600";
        }
        # An upload sink: the body is read and discarded.
        location = /upload {
            client_max_body_size 0;
            return 204;
        }
        # A sink that answers only after the whole body arrived: nginx buffers
        # the request body before proxying (to the sink above).
        location = /upload-whole {
            client_max_body_size 0;
            proxy_pass http://127.0.0.1:$NGINX_PORT/upload;
        }
    }$tls_servers
}
CONF
    nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" &
    NGINX_PID=$!
    trap nginx_stop EXIT
    local waiting
    for waiting in "$NGINX_PORT" ${NGINX_H2_PORT:-} ${NGINX_H1_PORT:-}; do
        for _ in $(seq 1 100); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$waiting") 2>/dev/null; then continue 2; fi
            sleep 0.1
        done
        echo "nginx did not start:" >&2
        cat "$NGINX_DIR/error.log" >&2 || true
        return 1
    done
    return 0
}

nginx_stop() {
    if [[ -n "${NGINX_PID:-}" ]]; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=""
    fi
    if [[ -n "${NGINX_DIR:-}" && "${NGINX_DIR}" == /tmp/* ]]; then rm -rf "$NGINX_DIR"; fi
}
