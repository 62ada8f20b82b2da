#!/usr/bin/env bash
# Sourced by demo.sh and bench.sh: starts nginx on a free loopback port with a
# generated document root; `nginx_stop` (installed as an EXIT trap) stops it.
set -euo pipefail

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# nginx_start ROOT_DIR: serves ROOT_DIR/www; sets NGINX_PORT and NGINX_DIR.
nginx_start() {
    NGINX_DIR="$1"
    NGINX_PORT=$(free_port)
    mkdir -p "$NGINX_DIR/www" "$NGINX_DIR/tmp"
    # nginx workers run as an unprivileged user: the tree must be readable.
    chmod 755 "$NGINX_DIR" "$NGINX_DIR/www"
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
    }
}
CONF
    nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" &
    NGINX_PID=$!
    trap nginx_stop EXIT
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$NGINX_PORT") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nginx did not start:" >&2
    cat "$NGINX_DIR/error.log" >&2 || true
    return 1
}

nginx_stop() {
    if [[ -n "${NGINX_PID:-}" ]]; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=""
    fi
    if [[ -n "${NGINX_DIR:-}" && "${NGINX_DIR}" == /tmp/* ]]; then rm -rf "$NGINX_DIR"; fi
}
