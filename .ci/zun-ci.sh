#!/usr/bin/env bash
# The real OpenStack Zun 18 (zun-api, zun-compute, zun-cni-daemon, zun-wsproxy from PyPI)
# beside berth, on the project's Neutron, for the compatibility suite (tests/compat/) and
# the Zun column of the bench (docs/zun-beside.md tells the whole story).
#
#   zun-ci.sh install   the venv (pinned by constraints/zun.txt and stamped), skipped when there
#   zun-ci.sh start     start what Zun needs (RabbitMQ, Keystone, Placement's venv, Cinder, Neutron,
#                       a node engine "zun" in its own netns), set up Zun's own database, vhost,
#                       Keystone user and catalog entries, Placement instance, Keystone-checked
#                       cinder-api and Neutron network, then its four services; only checks them
#                       when they answer already
#   zun-ci.sh stop      stop what start started (by pid) and its node engine, delete its Neutron
#                       and OVS ports, drop its database and vhost, take its region's catalog
#                       entries out of Keystone; leaves the shared services and its user alone
#   zun-ci.sh status    "zun: up ..." or "zun: down"
#   zun-ci.sh revive    start those of Zun's four services that do not run (a test killed one)
#   zun-ci.sh env       BERTH_ZUN_URL, BERTH_ZUN_IMAGE, BERTH_ZUN_REGION, BERTH_ZUN_NETWORK, ...
#   zun-ci.sh takeover  stop Zun's four services (its database, engine, Placement and Neutron
#                       ports stay), `berth db import-zun` its database into berth's own, start
#                       `berth serve` on Zun's engine and host; prints BERTH_URL=... (token admin)
#   zun-ci.sh handback  the way back: stop that berth, start Zun's services again
#
# Zun's users are the CI Keystone's (admin/admin, project admin). Zun's catalog entries
# (container, network, placement, volumev3) live in a region of their own, $REGION, so that
# nothing else finds Zun's Placement instance by accident. Its volumev3 is a cinder-api of
# its own with Keystone auth on the shared Cinder (noauth), whose NFS volumes Zun mounts
# under a shared mount (shared_volume_dir) its node engine sees into. Zun's engine is a node engine in the
# network namespace berth-zun: its 127.0.0.1:5000 is forwarded to the host's registry over
# a unix socket, so Zun pulls 127.0.0.1:5000/... images as it would anywhere (and never
# Docker Hub). Privsep: Zun would start its helpers with "sudo zun-rootwrap
# /etc/zun/rootwrap.conf ..." (it reads rootwrap_config before it parses its config files, so
# that path cannot be changed); each privsep section names the venv's privsep-helper instead.
# Needs root, MariaDB on 127.0.0.1:3306 (root, no password).
set -euo pipefail
BASE=${BASE:-${BERTH_CI_STATE:-/var/tmp/berth-ci}/zun}
STATE=${BERTH_CI_STATE:-/var/tmp/berth-ci}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ZUN_VERSION=18.0.0
CONSTRAINTS=$HERE/constraints/zun.txt
V=$BASE/venv/bin
DBNAME=zun_ci
VHOST=zun_ci
PORT=${BERTH_ZUN_PORT:-9517}
WSPROXY_PORT=${BERTH_ZUN_WSPROXY_PORT:-6784}
CNI_PORT=${BERTH_ZUN_CNI_PORT:-9036}
PLACEMENT_PORT=${BERTH_ZUN_PLACEMENT_PORT:-8779}
DOCKER_TCP_PORT=${BERTH_ZUN_DOCKER_TCP_PORT:-2385}
CINDER_PORT=${BERTH_ZUN_CINDER_PORT:-8786}
CINDER_BASE=$STATE/cinder
KEYSTONE=http://127.0.0.1:${BERTH_KEYSTONE_PORT:-5001}/v3
NEUTRON=http://127.0.0.1:${BERTH_NEUTRON_PORT:-9696}
REGION=zun-ci
NODE=zun
NODE_SOCK=/run/berth-node-$NODE.sock
NETNS=berth-$NODE
IMAGE=127.0.0.1:5000/berth-test/busybox:latest
SANDBOX_IMAGE=127.0.0.1:5000/berth-test/zun-sandbox:1
NET_NAME=zun-ci-net
NET_CIDR=10.123.0.0/24
URL="http://127.0.0.1:$PORT"
SERVICES=(api compute cni-daemon wsproxy)
BERTH_BASE=$BASE/berth
BERTH_PORT=${BERTH_ZUN_TAKEOVER_PORT:-9518}
BERTH_PYTHON=${BERTH_PYTHON:-$HERE/../.venv/bin/python}

CI_TAG=zun-ci
# shellcheck source=lib.sh
source "$HERE/lib.sh"
cinder_url() { bash "$HERE/cinder-ci.sh" env | sed -n 's/^BERTH_CINDER_URL=//p'; }
neutron_host() { bash "$HERE/neutron-ci.sh" env | sed -n 's/^BERTH_NEUTRON_HOST=//p'; }

# keystone ACTION ARGS: the Keystone and Neutron side, idempotent (zun_keystone_setup.py)
keystone() { "$V/python" "$HERE/zun_keystone_setup.py" "$@"; }

services_up() {   # the API answers with a token and zun-compute reports up
    keystone services-up "$URL" 2>/dev/null
}

install() {
    local want t0; want="zun==$ZUN_VERSION $(md5sum <"$CONSTRAINTS" | cut -c1-32)"
    local need="" c
    # lspci, numactl: zun-compute's resource tracker runs them on every inventory
    for c in socat:socat mysql:mariadb-client lspci:pciutils numactl:numactl; do
        command -v "${c%%:*}" >/dev/null || need="$need ${c##*:}"
    done
    if [ -n "$need" ]; then
        t0=$(now)
        export DEBIAN_FRONTEND=noninteractive
        # shellcheck disable=SC2086
        apt-get install -y -q --no-install-recommends $need >>"$BASE/apt.log" 2>&1 || {
            apt-get update -q >>"$BASE/apt.log" 2>&1
            # shellcheck disable=SC2086
            apt-get install -y -q --no-install-recommends $need >>"$BASE/apt.log" 2>&1
        } || { tail -n 20 "$BASE/apt.log" >&2; die "apt-get install$need failed"; }
        log "installed$need in $(since "$t0") s"
    fi
    [ -f "$BASE/venv/.berth-installed" ] && [ "$(cat "$BASE/venv/.berth-installed")" = "$want" ] && return 0
    t0=$(now); mkdir -p "$BASE"; rm -rf "$BASE/venv"
    python3 -m venv "$BASE/venv"
    "$V/pip" install -q --disable-pip-version-check -c "$CONSTRAINTS" "zun==$ZUN_VERSION" \
        PyMySQL python-zunclient >"$BASE/pip.log" 2>&1 \
        || { tail -n 20 "$BASE/pip.log" >&2; die "pip install zun==$ZUN_VERSION failed"; }
    echo "$want" >"$BASE/venv/.berth-installed"
    log "venv $BASE/venv ready in $(since "$t0") s"
}

dependencies() {   # the shared services Zun stands on: each start only checks what answers
    local t0; t0=$(now)
    mysqladmin -h127.0.0.1 -uroot ping >/dev/null 2>&1 || die "MariaDB does not answer on 127.0.0.1:3306 (root, no password)"
    bash "$HERE/ci-services.sh" start docker registry rabbitmq keystone placement
    # Cinder is shared too; its start only checks it when it answers
    bash "$HERE/cinder-ci.sh" start
    # Neutron is shared: start it only when its API does not answer at all. (neutron-ci.sh start
    # re-creates Neutron's database whenever its own check fails, and that check reads a log
    # line that a second start truncates away: never call it on a running Neutron.)
    if curl -fsS -m 10 "$NEUTRON/v2.0/networks?limit=1" >/dev/null 2>&1; then
        curl -fsS -m 10 "$NEUTRON/v2.0/agents?binary=neutron-openvswitch-agent&host=$(neutron_host)" \
            | grep -q '"alive": *true' || die "Neutron answers at $NEUTRON but its OVS agent on $(neutron_host) is not alive"
    else
        bash "$HERE/neutron-ci.sh" start
    fi
    # zun-compute only manages the node whose name `docker info` reports, and that must be its
    # [DEFAULT]host, which must be Neutron's host (the ports' binding:host_id): so the engine
    # gets Neutron's host as its hostname
    local host name; host=$(neutron_host)
    name=$(curl -fsS -m 3 --unix-socket "$NODE_SOCK" http://localhost/info 2>/dev/null | "$V/python" -c 'import json,sys; print(json.load(sys.stdin)["Name"])' 2>/dev/null || true)
    if [ -n "$name" ] && [ "$name" != "$host" ]; then bash "$HERE/ci-services.sh" node-stop "$NODE"; fi
    NODE_HOSTNAME=$host bash "$HERE/ci-services.sh" node-start "$NODE"
    log "shared services checked in $(since "$t0") s"
}

write_config() {
    mkdir -p "$BASE"/{etc/cni,logs,pids,state/lock,placement}
    # the three changes to Zun (zun_ci_patches.py says why): without the first, Zun's first container
    # turns the shared br-int into a kernel-datapath bridge that cannot exist here; without the
    # second, every capsule ends in Error (its sandbox is plugged as a container); without the
    # third, every attach of a volume of the CI's Cinder (NFS) fails
    local site; site=$("$V/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    rm -f "$site/zun_ci_datapath_patch.py" "$site/zun-ci-datapath-patch.pth"   # its former name
    cp "$HERE/zun_ci_patches.py" "$site/zun_ci_patches.py"
    echo 'import zun_ci_patches' >"$site/zun-ci-patches.pth"
    # Zun's paste pipeline ships in the wheel's data files (venv/etc/zun); its healthcheck file
    # path points into /etc
    sed "s#/etc/zun/healthcheck_disable#$BASE/state/healthcheck_disable#" \
        "$BASE/venv/etc/zun/api-paste.ini" >"$BASE/etc/api-paste.ini"
    cat >"$BASE/etc/cni/10-zun-cni.conf" <<EOC
{"cniVersion": "0.3.1", "name": "zun", "type": "zun-cni", "zun_conf": "$BASE/etc/zun.conf"}
EOC
    local auth
    auth="auth_url = $KEYSTONE
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = zun
password = zun-ci"
    cat >"$BASE/etc/zun.conf" <<EOC
[DEFAULT]
host = $(neutron_host)
my_ip = 127.0.0.1
transport_url = rabbit://berth:berth@127.0.0.1:5672/$VHOST
state_path = $BASE/state
log_dir = $BASE/logs
debug = true
container_driver = docker
capsule_driver = docker
image_driver_list = docker
default_image_driver = docker
sandbox_image = $SANDBOX_IMAGE
sandbox_image_driver = docker
sandbox_image_pull_policy = ifnotpresent
[api]
host_ip = 127.0.0.1
port = $PORT
workers = 1
api_paste_config = $BASE/etc/api-paste.ini
[database]
connection = mysql+pymysql://$DBNAME:$DBNAME@127.0.0.1:3306/$DBNAME
[docker]
api_url = unix://$NODE_SOCK
docker_data_root = $STATE/nodes/$NODE/data
# zun-wsproxy reaches the engine over TCP only (the attach URL it stores is ws://HOST:PORT)
docker_remote_api_host = 127.0.0.1
docker_remote_api_port = $DOCKER_TCP_PORT
[network]
driver = cni
[cni_daemon]
cni_daemon_host = 127.0.0.1
cni_daemon_port = $CNI_PORT
worker_num = 1
zun_cni_config_file = $BASE/etc/cni/10-zun-cni.conf
[websocket_proxy]
wsproxy_host = 127.0.0.1
wsproxy_port = $WSPROXY_PORT
base_url = ws://127.0.0.1:$WSPROXY_PORT/
[oslo_concurrency]
lock_path = $BASE/state/lock
# privsep: Zun's own contexts and os-vif's, each started by the venv's privsep-helper
[privsep]
helper_command = $V/privsep-helper --config-file $BASE/etc/zun.conf
[vif_plug_ovs_privileged]
helper_command = $V/privsep-helper --config-file $BASE/etc/zun.conf
[vif_plug_linux_bridge_privileged]
helper_command = $V/privsep-helper --config-file $BASE/etc/zun.conf
[os_vif_ovs]
ovsdb_connection = tcp:127.0.0.1:6640
[neutron_client]
region_name = $REGION
[cinder_client]
region_name = $REGION
[volume]
driver = cinder
# Zun's os-brick connector runs its root commands through privsep (no rootwrap)
[privsep_osbrick]
helper_command = $V/privsep-helper --config-file $BASE/etc/zun.conf
[placement_client]
region_name = $REGION
[keystone_auth]
$auth
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE
$auth
EOC
    # Zun's own Cinder API: the shared Cinder (its database, scheduler and volume service) is
    # noauth, a token "<user>:<project>", and Zun sends Keystone tokens; this second cinder-api
    # on the same database and queues checks them (the shared cinder.conf, then this file)
    cat >"$BASE/etc/cinder-api.conf" <<EOC
[DEFAULT]
auth_strategy = keystone
osapi_volume_listen_port = $CINDER_PORT
log_dir = $BASE/logs
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE
$auth
EOC
    # Zun's own Placement (keystone auth: Zun sends Keystone tokens), from the shared venv,
    # which has no MariaDB driver: SQLite, served by one thread (with four, a burst of creates
    # got "sqlite3.OperationalError: database is locked", a 500 to Zun's create)
    cat >"$BASE/placement/placement.conf" <<EOC
[api]
auth_strategy = keystone
[placement_database]
connection = sqlite:///$BASE/placement/placement.sqlite
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE
$auth
EOC
}

setup_database() {
    mysql -h127.0.0.1 -uroot -e "CREATE DATABASE IF NOT EXISTS $DBNAME CHARACTER SET utf8mb4;
        CREATE USER IF NOT EXISTS '$DBNAME'@'127.0.0.1' IDENTIFIED BY '$DBNAME';
        GRANT ALL ON $DBNAME.* TO '$DBNAME'@'127.0.0.1';"
    rabbitmqctl -q list_vhosts | grep -qx "$VHOST" || rabbitmqctl -q add_vhost "$VHOST"
    rabbitmqctl -q set_permissions -p "$VHOST" berth '.*' '.*' '.*'
    local t0; t0=$(now)
    "$V/zun-db-manage" --config-file "$BASE/etc/zun.conf" upgrade >"$BASE/logs/db-manage.log" 2>&1 \
        || { tail -n 20 "$BASE/logs/db-manage.log" >&2; die "zun-db-manage upgrade failed"; }
    log "database $DBNAME migrated in $(since "$t0") s"
}

start_bg() {   # start_bg NAME CMD... : one service, its pid file, its output in logs/NAME.out
    local name=$1; shift
    if pid_is "$(cat "$BASE/pids/$name.pid" 2>/dev/null)" "$1"; then return 0; fi
    PATH="$V:$PATH" setsid nohup "$@" >"$BASE/logs/$name.out" 2>&1 </dev/null &
    echo $! >"$BASE/pids/$name.pid"
}

start_placement() {
    local t0; t0=$(now)
    [ -f "$BASE/placement/placement.sqlite" ] || "$STATE/venv-placement/bin/placement-manage" \
        --config-file "$BASE/placement/placement.conf" db sync >"$BASE/logs/placement-db.log" 2>&1 \
        || { tail -n 20 "$BASE/logs/placement-db.log" >&2; die "placement-manage db sync failed"; }
    OS_PLACEMENT_CONFIG_DIR="$BASE/placement" start_bg placement "$STATE/venv-placement/bin/gunicorn" \
        --no-control-socket -b "127.0.0.1:$PLACEMENT_PORT" -w 1 --threads 1 placement.wsgi.api:application
    for _ in $(seq 1 150); do curl -fsS -m 2 "http://127.0.0.1:$PLACEMENT_PORT/" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -fsS -m 2 "http://127.0.0.1:$PLACEMENT_PORT/" >/dev/null || { tail -n 20 "$BASE/logs/placement.out" >&2; die "Zun's placement did not answer"; }
    log "Zun's placement up in $(since "$t0") s on 127.0.0.1:$PLACEMENT_PORT"
}

shared_volume_dir() {   # Zun's [volume]volume_dir, a shared mount the node engine sees into
    # Zun mounts each Cinder volume under $BASE/state/mnt on the host; the node engine lives in
    # a mount namespace of its own (ip netns exec), a copy of the host's made when it started,
    # and the host's mounts are private: a volume mounted later would be an empty directory in
    # the container. A shared bind mount made before the engine starts propagates them.
    local d=$BASE/state/mnt
    mkdir -p "$d"
    mountpoint -q "$d" && return 0
    mount --bind "$d" "$d" && mount --make-shared "$d"
    # an engine started before it cannot see it: started again by dependencies
    if [ -e "/run/netns/$NETNS" ]; then bash "$HERE/ci-services.sh" node-stop "$NODE"; fi
}

start_cinder_api() {   # Zun's Keystone-checked cinder-api beside the shared Cinder
    local t0; t0=$(now)
    start_bg cinder-api "$CINDER_BASE/venv/bin/cinder-api" --config-file "$CINDER_BASE/etc/cinder.conf" \
        --config-file "$BASE/etc/cinder-api.conf"
    for _ in $(seq 1 150); do curl -fsS -m 2 "http://127.0.0.1:$CINDER_PORT/" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -fsS -m 2 "http://127.0.0.1:$CINDER_PORT/" >/dev/null || { tail -n 20 "$BASE/logs/cinder-api.out" >&2; die "Zun's cinder-api did not answer"; }
    log "Zun's cinder-api up in $(since "$t0") s on 127.0.0.1:$CINDER_PORT"
}

start_registry_path() {   # the node's 127.0.0.1:5000 -> a unix socket -> the host's registry
    start_bg registry-host socat "UNIX-LISTEN:$BASE/registry.sock,fork,unlink-early" TCP:127.0.0.1:5000
    for _ in $(seq 1 50); do [ -S "$BASE/registry.sock" ] && break; sleep 0.1; done
    start_bg registry-node ip netns exec "$NETNS" socat "TCP-LISTEN:5000,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$BASE/registry.sock"
    for _ in $(seq 1 50); do
        ip netns exec "$NETNS" curl -fsS -m 2 http://127.0.0.1:5000/v2/ >/dev/null 2>&1 && return 0; sleep 0.1
    done
    die "the node $NODE cannot reach the registry through $BASE/registry.sock"
}

start_docker_tcp() {   # the node engine on 127.0.0.1:$DOCKER_TCP_PORT, for zun-wsproxy (Zun's way)
    start_bg docker-tcp socat "TCP-LISTEN:$DOCKER_TCP_PORT,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$NODE_SOCK"
    for _ in $(seq 1 50); do
        curl -fsS -m 2 "http://127.0.0.1:$DOCKER_TCP_PORT/_ping" >/dev/null 2>&1 && return 0; sleep 0.1
    done
    die "the node engine does not answer on 127.0.0.1:$DOCKER_TCP_PORT (socat to $NODE_SOCK)"
}

images() {   # Zun's test image and its capsule sandbox, in the host's registry
    curl -fsS -m 3 "http://127.0.0.1:5000/v2/berth-test/busybox/manifests/latest" \
        -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' >/dev/null 2>&1 \
        || bash "$HERE/make-test-images.sh" --push 127.0.0.1:5000 busybox >&2
    if ! curl -fsS -m 3 "http://127.0.0.1:5000/v2/berth-test/zun-sandbox/manifests/1" \
            -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' >/dev/null 2>&1; then
        # a pause stand-in: busybox that sleeps (Zun's default, kubernetes/pause, is on Docker Hub)
        local c; c=$(DOCKER_HOST=unix:///var/run/docker.sock docker create berth-test/busybox:latest)
        DOCKER_HOST=unix:///var/run/docker.sock docker commit -c 'CMD ["sleep", "2147483647"]' "$c" "$SANDBOX_IMAGE" >/dev/null
        DOCKER_HOST=unix:///var/run/docker.sock docker rm "$c" >/dev/null
        DOCKER_HOST=unix:///var/run/docker.sock docker push "$SANDBOX_IMAGE" >/dev/null
    fi
}

start() {
    if services_up; then log "zun: already up at $URL"; return 0; fi
    local t0 t1; t0=$(now)
    mkdir -p "$BASE"
    install
    shared_volume_dir
    dependencies
    write_config
    images
    start_registry_path
    start_docker_tcp
    setup_database
    start_placement
    start_cinder_api
    t1=$(now)
    keystone setup "$URL" "$NEUTRON" "http://127.0.0.1:$PLACEMENT_PORT" "$REGION" \
        "http://127.0.0.1:$CINDER_PORT/v3/%(project_id)s" \
        || die "the Keystone set-up failed"
    keystone network "$NET_NAME" "$NET_CIDR" || die "the Neutron network $NET_NAME could not be made"
    log "Keystone user, catalog ($REGION) and network $NET_NAME in $(since "$t1") s"
    t1=$(now)
    start_zun_services
    for _ in $(seq 1 240); do services_up && break; sleep 0.5; done
    services_up || { tail -n 20 "$BASE"/logs/*.out >&2; die "zun did not come up within 120 s (logs in $BASE/logs)"; }
    log "zun-api, zun-compute, zun-cni-daemon and zun-wsproxy up in $(since "$t1") s at $URL"
    log "zun: start took $(since "$t0") s in all"
}

stop_pids() {   # stop_pids NAME...: each by its pid file (its process group), then forget it
    local s files=()
    for s in "$@"; do files+=("$BASE/pids/$s.pid"); done
    stop_pidfiles "${files[@]}" || true
}

start_zun_services() {
    local c="--config-file $BASE/etc/zun.conf"
    # shellcheck disable=SC2086
    {
        start_bg cni-daemon "$V/zun-cni-daemon" $c
        start_bg api "$V/zun-api" $c
        start_bg compute "$V/zun-compute" $c
        start_bg wsproxy "$V/zun-wsproxy" $c
    }
}

takeover() {   # Zun's services stopped, its database imported, berth serve on its engine
    [ -f "$BASE/etc/zun.conf" ] || die "no Zun to take over here: run zun-ci.sh start first"
    [ -x "$BERTH_PYTHON" ] || die "no berth Python at $BERTH_PYTHON: set BERTH_PYTHON"
    local t0; t0=$(now)
    stop_pids "${SERVICES[@]}"
    log "Zun's services stopped (its containers run on; its database is only read from now on)"
    mkdir -p "$BERTH_BASE/state"
    cat >"$BERTH_BASE/berth.conf" <<EOC
[DEFAULT]
host = $(neutron_host)
state_path = $BERTH_BASE/state
image_pull_policy = ifnotpresent
[api]
host_ip = 127.0.0.1
port = $BERTH_PORT
[websocket_proxy]
wsproxy_host = 127.0.0.1
wsproxy_port = $((BERTH_PORT + 1))
[cni_daemon]
cni_daemon_port = $((BERTH_PORT + 2))
sweep_orphan_veths = false
[docker]
api_url = unix://$NODE_SOCK
[database]
connection = sqlite:///$BERTH_BASE/state/berth.sqlite
[network]
driver = cni
[neutron]
endpoint_override = $NEUTRON
# Zun's Cinder volumes: Zun mounted each at <its volume_dir>/<volume uuid>, where berth
# unmounts it on a delete; berth (noauth, as here) calls the shared Cinder (noauth, a token
# "<user>:<project>") directly
[volume]
driver = cinder
volume_dir = $BASE/state/mnt
[cinder_client]
endpoint_override = $(cinder_url)/%(project_id)s
EOC
    rm -f "$BERTH_BASE/state/berth.sqlite"*
    PYTHONPATH="$HERE/..${PYTHONPATH:+:$PYTHONPATH}" "$BERTH_PYTHON" -m berth.cmd.main \
        --config-file "$BERTH_BASE/berth.conf" db import-zun \
        --zun-connection "mysql+pymysql://$DBNAME:$DBNAME@127.0.0.1:3306/$DBNAME" >&2 \
        || die "the import refused (above); Zun's services are stopped: zun-ci.sh handback starts them"
    PYTHONPATH="$HERE/..${PYTHONPATH:+:$PYTHONPATH}" start_bg berth "$BERTH_PYTHON" -m berth.cmd.main \
        --config-file "$BERTH_BASE/berth.conf" serve
    for _ in $(seq 1 240); do curl -fsS -m 2 "http://127.0.0.1:$BERTH_PORT/healthcheck" >/dev/null 2>&1 && break; sleep 0.5; done
    curl -fsS -m 2 "http://127.0.0.1:$BERTH_PORT/healthcheck" >/dev/null \
        || { tail -n 30 "$BASE/logs/berth.out" >&2; die "berth serve did not answer (log: $BASE/logs/berth.out)"; }
    log "takeover done in $(since "$t0") s"
    echo "BERTH_URL=http://127.0.0.1:$BERTH_PORT"
}

handback() {   # the way back: berth stopped, Zun's services started on its untouched database
    stop_pids berth
    start_zun_services
    for _ in $(seq 1 240); do services_up && break; sleep 0.5; done
    services_up || die "zun did not come back within 120 s (logs in $BASE/logs)"
    log "zun: back at $URL"
}

stop() {
    local s pid pids="" priv
    stop_pids berth
    priv=$(pgrep -f "privsep-helper --config-file $BASE/etc/zun.conf" || true)
    for s in "${SERVICES[@]}" placement cinder-api registry-node registry-host docker-tcp; do
        pid=$(cat "$BASE/pids/$s.pid" 2>/dev/null || true)
        if pid_alive "$pid"; then kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; pids="$pids $pid"; fi
    done
    for pid in $pids; do
        for _ in $(seq 1 50); do pid_alive "$pid" || break; sleep 0.2; done
        pid_alive "$pid" && { kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; }
    done
    for pid in $priv; do kill "$pid" 2>/dev/null || true; done
    rm -f "$BASE"/pids/*.pid "$BASE/registry.sock"
    [ -n "$pids" ] && log "zun: stopped" || log "zun: not started by this script"
    # Zun's leftovers on the shared Neutron: its ports (device_owner compute:zun) and their OVS
    # ports on br-int (Zun names every one's vm-uuid "zun"); then its engine and containers
    [ -x "$V/python" ] && keystone cleanup-ports 2>/dev/null || true
    # and its catalog entries (region $REGION): a second 'container' service left behind
    # makes the docs' `openstack endpoint create ... container` ambiguous
    [ -x "$V/python" ] && keystone teardown "$REGION" 2>/dev/null || true
    if command -v ovs-vsctl >/dev/null && ovs-vsctl --timeout=2 show >/dev/null 2>&1; then
        for s in $(ovs-vsctl --timeout=5 --bare --columns=name find Interface external_ids:vm-uuid=zun 2>/dev/null); do
            ovs-vsctl --timeout=5 --if-exists del-port br-int "$s" || true
        done
    fi
    [ -e "/run/netns/$NETNS" ] && bash "$HERE/ci-services.sh" node-stop "$NODE"
    if [ -f "$BASE/etc/zun.conf" ]; then
        mysql -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $DBNAME; DROP USER IF EXISTS '$DBNAME'@'127.0.0.1';" 2>/dev/null || true
        rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
    fi
    mountpoint -q "$BASE/state/mnt" && umount -R -l "$BASE/state/mnt"
    rm -rf "$BASE/state" "$BASE/placement" "$BASE/etc"
}

revive() {   # after a test killed one of the four: start those that do not run
    [ -f "$BASE/etc/zun.conf" ] || die "no Zun here: run zun-ci.sh start first"
    start_zun_services
    for _ in $(seq 1 240); do services_up && break; sleep 0.5; done
    services_up || die "zun did not come back within 120 s (logs in $BASE/logs)"
    log "zun: services running at $URL"
}

status() { [ -x "$V/python" ] && services_up && echo "zun: up at $URL" || echo "zun: down"; }

print_env() {
    cat <<ENV
BERTH_ZUN_URL=$URL
BERTH_ZUN_IMAGE=$IMAGE
BERTH_ZUN_REGION=$REGION
BERTH_ZUN_NETWORK=$NET_NAME
BERTH_ZUN_KEYSTONE_URL=$KEYSTONE
BERTH_ZUN_DOCKER_HOST=unix://$NODE_SOCK
BERTH_ZUN_CINDER_URL=http://127.0.0.1:$CINDER_PORT/v3
BERTH_ZUN_BASE=$BASE
ENV
}

[ "$(id -u)" = 0 ] || die "run as root"
case "${1:-}" in
    install) mkdir -p "$BASE"; install ;;
    start) start ;;
    stop) stop ;;
    status) status ;;
    env) print_env ;;
    takeover) takeover ;;
    handback) handback ;;
    revive) revive ;;
    *) sed -n '2,33p' "$0"; exit 2 ;;
esac
