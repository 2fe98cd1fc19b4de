# Shell helpers shared by scripts/test, scripts/demo and scripts/demo-cluster (sourced, not run).
#
# They install what the project needs when it is missing (a fresh CI machine has no nginx or
# wrk) and run a throw-away nginx on 127.0.0.1 with the same configuration the Rust test fixture
# writes (tests/common/nginx.rs): keep the two in step. The same goes for majiang-server, the
# mahjong mode's server (tests/common/majiang.rs), installed with npm ci from scripts/.

# Installs the Debian packages whose commands are missing: "command:package" pairs.
# apt-get update runs only when something has to be installed.
ensure_commands() {
    local missing=() pair cmd pkg
    for pair in "$@"; do
        cmd=${pair%%:*}
        pkg=${pair##*:}
        if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
            missing+=("$pkg")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # APT_FLAGS: more flags for this install (--no-install-recommends).
    # shellcheck disable=SC2086
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${APT_FLAGS:-} "${missing[@]}" >/dev/null
}

# The nginx binary (Debian puts it in /usr/sbin, which is not always on PATH).
nginx_bin() {
    if [ -x /usr/sbin/nginx ]; then echo /usr/sbin/nginx; else command -v nginx; fi
}

# A TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
    # Below the ephemeral range: after a big run, thousands of client ports there sit in
    # TIME_WAIT, and a server cannot bind one of them although nothing answers on it.
    local port low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 12000 ] || low=60000
    while :; do
        port=$((10000 + RANDOM % (low - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
            [ -z "$(ss -Htan "( sport = :$port )" 2>/dev/null)" ]; then
            echo "$port"
            return
        fi
    done
}

# Writes DIR/www/index.html: 2048 bytes, lines of 63 letters (a..z repeating) and a newline,
# byte for byte what tests/common/nginx.rs serves.
write_index_html() {
    mkdir -p "$1/www"
    awk 'BEGIN { for (i = 0; i < 2048; i++) printf "%c", (i % 64 == 63) ? 10 : 97 + i % 26 }' \
        >"$1/www/index.html"
}

# Prints the part every nginx.conf here shares: the main and events contexts, and the opening of
# http { } with its temp paths, all inside DIR (pid, logs and temp files stay in the temp dir).
nginx_conf_head() {
    local dir=$1 user=""
    [ "$(id -u)" -eq 0 ] && user="user root root;"
    mkdir -p "$dir/tmp"
    cat <<CONF
# Written by scripts/lib.sh (tests/common/nginx.rs writes the same for the tests).
daemon off;
master_process on;
worker_processes 1;
$user
pid $dir/nginx.pid;
error_log $dir/error.log warn;

events {
    worker_connections 4096;
}

http {
    client_body_temp_path $dir/tmp/client_body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
CONF
}

# Writes DIR/nginx.conf: static files from DIR/www over HTTP_PORT and HTTPS_PORT (certificate
# DIR/cert.pem, key DIR/key.pem), everything else (pid, logs, temp files) inside DIR.
write_nginx_conf() {
    local dir=$1 http_port=$2 https_port=$3
    {
        nginx_conf_head "$dir"
        cat <<CONF
    default_type application/octet-stream;
    log_format tsumo '"\$request" \$status \$request_length \$content_length \$body_bytes_sent \$connection \$connection_requests \$server_port \$ssl_protocol \$remote_addr';
    access_log $dir/access.log tsumo;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
    ssl_session_cache shared:TLS:1m;

    server {
        listen 127.0.0.1:$http_port;
        listen 127.0.0.1:$https_port ssl;
        root $dir/www;
        error_page 405 =200 \$uri;
    }
}
CONF
    } >"$dir/nginx.conf"
}

# Self-signed certificate for localhost and 127.0.0.1 into DIR/cert.pem and DIR/key.pem.
write_self_signed_cert() {
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null
}

# Starts nginx on DIR/nginx.conf in the background, sets NGINX_PID, waits for the given ports.
start_nginx() {
    local dir=$1 port tries
    shift
    "$(nginx_bin)" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
    NGINX_PID=$!
    for port in "$@"; do
        tries=0
        until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
            tries=$((tries + 1))
            if [ $tries -gt 200 ] || ! kill -0 "$NGINX_PID" 2>/dev/null; then
                echo "nginx did not open port $port:" >&2
                cat "$dir/error.log" >&2 || true
                return 1
            fi
            sleep 0.05
        done
    done
}

# Stops the nginx started by start_nginx (fast shutdown) and waits for it.
stop_nginx() {
    if [ -n "${NGINX_PID:-}" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID"
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    NGINX_PID=
}

# --- majiang-server (the mahjong mode's real server; tests/common/majiang.rs does the same) ---

# The scripts/ directory, wherever the caller's working directory is.
majiang_scripts_dir() {
    (cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
}

# Installs the pinned @kobalab/majiang-server (scripts/package-lock.json) into
# scripts/node_modules when it is missing. npm ci installs exactly what the lock file names.
ensure_majiang() {
    local scripts
    scripts=$(majiang_scripts_dir)
    [ -d "$scripts/node_modules/@kobalab/majiang-server" ] && return 0
    echo "installing majiang-server: npm ci in $scripts" >&2
    (cd "$scripts" && npm ci --no-audit --no-fund) >&2
}

# The Python readers of tsumo's files that the tests use (junitparser for --junit, Python-Markdown
# for the CI summary): a venv of the tests' own in scripts/.venv (gitignored), with the versions
# pinned in scripts/requirements-readers.txt, made again when that file changes. The tests find
# scripts/.venv/bin/python (tests/ci_reports.rs).
ensure_python_readers() {
    local scripts venv requirements
    scripts=$(majiang_scripts_dir)
    venv=$scripts/.venv
    requirements=$scripts/requirements-readers.txt
    if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$venv/requirements-readers.txt"; then
        return 0
    fi
    echo "installing the Python readers: $requirements into $venv" >&2
    # Debian's python3 makes a venv only with python3-venv (no command: always "missing").
    python3 -m venv "$venv" 2>/dev/null || {
        ensure_commands python3-venv-module:python3-venv
        python3 -m venv "$venv"
    }
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
    cp "$requirements" "$venv/requirements-readers.txt"
}

# Starts majiang-server in the background on 127.0.0.1:PORT (the loopback.js preload: the server
# itself binds every interface), sessions stored in DIR/sessions, stdout and stderr in
# DIR/majiang.log. Sets MAJIANG_PID and waits (up to 15 s) for the server's start line.
start_majiang() {
    local dir=$1 port=$2 scripts tries=0
    scripts=$(majiang_scripts_dir)
    mkdir -p "$dir/sessions"
    node -r "$scripts/loopback.js" "$scripts/node_modules/@kobalab/majiang-server/bin/server.js" \
        --port "$port" --store "$dir/sessions" >"$dir/majiang.log" 2>&1 &
    MAJIANG_PID=$!
    until grep -q "^Server start on http://127.0.0.1:$port/server/" "$dir/majiang.log" 2>/dev/null; do
        tries=$((tries + 1))
        if [ $tries -gt 300 ] || ! kill -0 "$MAJIANG_PID" 2>/dev/null; then
            echo "majiang-server did not start on port $port:" >&2
            cat "$dir/majiang.log" >&2 || true
            stop_majiang
            return 1
        fi
        sleep 0.05
    done
}

# Stops the majiang-server started by start_majiang and waits for it.
stop_majiang() {
    if [ -n "${MAJIANG_PID:-}" ] && kill -0 "$MAJIANG_PID" 2>/dev/null; then
        kill -TERM "$MAJIANG_PID"
        wait "$MAJIANG_PID" 2>/dev/null || true
    fi
    MAJIANG_PID=
}

# Writes DIR/nginx.conf: the nginx in front of the backends, on 127.0.0.1 — a WebSocket reverse
# proxy on WS_PORT passing /server/ (majiang-server's HTTP login and logout and its socket.io
# upgrade) to WS_UPSTREAM, and, when HTTPS_PORT is given, an HTTPS server terminating TLS with
# CERT_DIR/cert.pem and passing every request to the backend at 127.0.0.1:HTTP_UPSTREAM.
write_nginx_proxy_conf() {
    local dir=$1 ws_port=$2 ws_upstream=$3 https_port=${4:-} http_upstream=${5:-} cert_dir=${6:-} https=""
    if [ -n "$https_port" ]; then
        https="
    upstream backend {
        server 127.0.0.1:$http_upstream;
        keepalive 64;
    }

    server {
        listen 127.0.0.1:$https_port ssl;
        ssl_certificate $cert_dir/cert.pem;
        ssl_certificate_key $cert_dir/key.pem;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
        }
    }"
    fi
    {
        nginx_conf_head "$dir"
        cat <<CONF
    access_log off;
    keepalive_requests 1000000;
    map \$http_upgrade \$connection_upgrade {
        default upgrade;
        '' close;
    }

    server {
        listen 127.0.0.1:$ws_port;
        location /server/ {
            proxy_pass http://127.0.0.1:$ws_upstream;
            proxy_http_version 1.1;
            proxy_set_header Host \$http_host;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
        }
    }
$https
}
CONF
    } >"$dir/nginx.conf"
}

# --- a cluster on one machine (tests/common/netns.rs builds the same for tests/cluster.rs) ---

# Makes N network namespaces as N generator "nodes": a bridge in the root namespace holding
# 10.77.X.1/24 (X: a /24 no address of this host is in), and in each namespace one end of a
# veth pair onto the bridge with the address 10.77.X.(10+i). Sets CLUSTER_BRIDGE, CLUSTER_SERVER
# (the bridge's address: where servers listen for the nodes), CLUSTER_NS and CLUSTER_NODES
# (arrays: the namespaces and their addresses). Needs root. On failure it removes what it made
# and returns 1; cluster_down removes everything (call it from an EXIT trap).
cluster_up() {
    local n=$1 id x i ns host node addr used
    id=$(printf '%05d' $(( ($$ * 7 + RANDOM) % 100000 )))
    used=$(ip -4 -o address show)
    for x in $(seq 1 250); do
        grep -q " 10\.77\.$x\." <<<"$used" || break
    done
    CLUSTER_BRIDGE=tsb$id
    CLUSTER_SERVER=10.77.$x.1
    CLUSTER_NS=()
    CLUSTER_NODES=()
    ip link add "$CLUSTER_BRIDGE" type bridge || { CLUSTER_BRIDGE=; return 1; }
    { ip address add "$CLUSTER_SERVER/24" dev "$CLUSTER_BRIDGE" \
        && ip link set "$CLUSTER_BRIDGE" up; } || { cluster_down; return 1; }
    for ((i = 0; i < n; i++)); do
        ns=tsumo-$id-$i
        host=tsb${id}v$i
        node=tsn${id}v$i
        addr=10.77.$x.$((10 + i))
        ip netns add "$ns" || { cluster_down; return 1; }
        CLUSTER_NS+=("$ns")
        if ! { ip link add "$host" type veth peer name "$node" \
            && ip link set "$host" master "$CLUSTER_BRIDGE" \
            && ip link set "$host" up \
            && ip link set "$node" netns "$ns" \
            && ip -n "$ns" link set lo up \
            && ip -n "$ns" link set "$node" name eth0 \
            && ip -n "$ns" address add "$addr/24" dev eth0 \
            && ip -n "$ns" link set eth0 up; }; then
            ip link delete "$host" 2>/dev/null || true
            cluster_down
            return 1
        fi
        CLUSTER_NODES+=("$addr")
    done
}

# Removes the namespaces (their veth pairs go with them) and the bridge of cluster_up.
cluster_down() {
    local ns
    for ns in "${CLUSTER_NS[@]}"; do
        ip netns delete "$ns" || true
    done
    if [ -n "${CLUSTER_BRIDGE:-}" ]; then
        ip link delete "$CLUSTER_BRIDGE" || true
    fi
    CLUSTER_NS=()
    CLUSTER_NODES=()
    CLUSTER_BRIDGE=
}
