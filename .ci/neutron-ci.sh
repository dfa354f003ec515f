#!/usr/bin/env bash
# A real OpenStack Neutron 29 (ML2 + Open vSwitch on the userspace datapath, MariaDB,
# noauth) on loopback, for the cni network driver's integration tests. Adapted from
# shared/tools/neutron/neutron-up.sh and neutron-down.sh (shared/infra.md section 10).
#
#   neutron-ci.sh install   apt packages and the venv, both skipped when already there
#                           (the venv is pinned by constraints/neutron.txt and stamped)
#   neutron-ci.sh start     install, set up (database, vhost, config, OVS bridges) and start
#                           the API, the RPC server and the OVS agent; only checks them when
#                           they answer already, and only waits for them when their
#                           processes run but do not answer yet: never a second copy
#   neutron-ci.sh stop      stop what start started (by pid), drop its database and vhost,
#                           remove br-int and br-phys1, and OVS itself when start started it
#                           (start and stop wait for one another: a lock)
#   neutron-ci.sh status    "neutron: up ...", "neutron: starting ..." (its processes run but
#                           the agent has not reported alive or finished a loop yet) or
#                           "neutron: down"
#   neutron-ci.sh env       BERTH_NEUTRON_URL, BERTH_NEUTRON_HOST, BERTH_NEUTRON_BASE
#
# Neutron's host (the agent's, and the binding:host_id berth gives its ports) is
# $NEUTRON_HOST (default berth-neutron-ci), not the machine's hostname: a berth under test
# runs with that [DEFAULT]host. Pitfalls worked around (infra.md §10): no neutron-server in
# 29 (the API is WSGI, run under gunicorn through a shim); rpc_workers >= 1; root_helper =
# env (no sudo); MariaDB (a 2025.2 migration is MySQL-only); the agent ignores SIGTERM.
# Needs root, MariaDB on 127.0.0.1:3306 (root, no password), RabbitMQ with the user berth
# (ci-services.sh start rabbitmq).
set -euo pipefail
BASE=${BASE:-${BERTH_CI_STATE:-/var/tmp/berth-ci}/neutron}
NEUTRON_HOST=${NEUTRON_HOST:-berth-neutron-ci}
DBNAME=neutron_ci
VHOST=neutron_ci
PORT=${BERTH_NEUTRON_PORT:-9696}
NEUTRON_VERSION=29.0.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONSTRAINTS=$HERE/constraints/neutron.txt
V=$BASE/venv/bin
URL="http://127.0.0.1:$PORT"
CONF="--config-file $BASE/etc/neutron.conf --config-file $BASE/etc/plugins/ml2/ml2_conf.ini"
SERVICES=(api rpc-server ovs-agent)

CI_TAG=neutron-ci
# shellcheck source=lib.sh
source "$HERE/lib.sh"

agent_up() {   # the API answers, the OVS agent is alive and has finished a loop
    curl -fsS -m 10 "$URL/v2.0/agents?binary=neutron-openvswitch-agent&host=$NEUTRON_HOST" 2>/dev/null \
        | grep -q '"alive": *true' || return 1
    # any loop, not only the first: a log truncated under a running agent (as an older
    # start did) holds NULs and its later loops; -a reads it as text all the same
    grep -aqE 'rpc_loop - iteration:[0-9]+ completed' "$BASE/log/ovs-agent.log" 2>/dev/null
}

install() {
    local need="" c t0
    # conntrack: the OVS agent runs it to drop a removed port's connections (Debian's
    # neutron-openvswitch-agent depends on it); without it each such drop logs a
    # traceback (480 in one run of the Neutron tests), burying the agent's real errors
    for c in ovs-vswitchd:openvswitch-switch ethtool:ethtool nsenter:util-linux curl:curl \
             mysql:mariadb-client conntrack:conntrack; do
        command -v "${c%%:*}" >/dev/null || need="$need ${c##*:}"
    done
    # shellcheck disable=SC2086
    [ -z "$need" ] || apt_install "$BASE/apt.log" $need
    local want; want="neutron==$NEUTRON_VERSION $(md5sum <"$CONSTRAINTS" | cut -c1-32)"
    [ -f "$BASE/venv/.berth-installed" ] && [ "$(cat "$BASE/venv/.berth-installed")" = "$want" ] && return 0
    if [ -x "$V/neutron-rpc-server" ] && "$V/pip" freeze 2>/dev/null | grep -v '^-e' \
            | diff -q - <(cat "$CONSTRAINTS") >/dev/null; then
        echo "$want" >"$BASE/venv/.berth-installed"; return 0     # made by the shared recipe
    fi
    t0=$(now); mkdir -p "$BASE"; rm -rf "$BASE/venv"
    python3 -m venv "$BASE/venv"
    "$V/pip" install -q --disable-pip-version-check -c "$CONSTRAINTS" "neutron==$NEUTRON_VERSION" \
        PyMySQL gunicorn >"$BASE/pip.log" 2>&1 \
        || { tail -n 20 "$BASE/pip.log" >&2; die "pip install neutron==$NEUTRON_VERSION failed"; }
    echo "$want" >"$BASE/venv/.berth-installed"
    log "venv $BASE/venv ready in $(since "$t0") s"
}

setup() {
    mkdir -p "$BASE"/{etc/plugins/ml2,state,lock,log,pids}
    mysql -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $DBNAME; CREATE DATABASE $DBNAME CHARACTER SET utf8mb4;"
    rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
    rabbitmqctl -q add_vhost "$VHOST"
    rabbitmqctl -q set_permissions -p "$VHOST" berth '.*' '.*' '.*'
    cp "$BASE/venv/etc/neutron/api-paste.ini" "$BASE/etc/"
    sed -i "s#/var/lib/neutron/healthcheck_disable#$BASE/state/healthcheck_disable#" "$BASE/etc/api-paste.ini"
    cat >"$BASE/etc/neutron.conf" <<EOC
[DEFAULT]
host = $NEUTRON_HOST
core_plugin = ml2
service_plugins =
auth_strategy = noauth
api_paste_config = $BASE/etc/api-paste.ini
transport_url = rabbit://berth:berth@127.0.0.1:5672/$VHOST
state_path = $BASE/state
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 0
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
use_stderr = true
[database]
connection = mysql+pymysql://root@127.0.0.1:3306/$DBNAME
[oslo_concurrency]
lock_path = $BASE/lock
[agent]
root_helper = env
report_interval = 5
EOC
    cat >"$BASE/etc/plugins/ml2/ml2_conf.ini" <<EOC
[ml2]
type_drivers = local,flat,vlan
project_network_types = local
mechanism_drivers = openvswitch
extension_drivers = port_security
[ml2_type_flat]
flat_networks = physnet1
[ml2_type_vlan]
network_vlan_ranges = physnet1:100:200
[securitygroup]
enable_security_group = true
firewall_driver = openvswitch
[ovs]
integration_bridge = br-int
datapath_type = netdev
bridge_mappings = physnet1:br-phys1
of_listen_address = 127.0.0.1
ovsdb_connection = tcp:127.0.0.1:6640
[agent]
tunnel_types =
EOC
    cat >"$BASE/etc/neutron_api_wsgi.py" <<EOC
import os, sys
os.environ.setdefault('OS_NEUTRON_CONFIG_DIR', '$BASE/etc')
os.environ.setdefault('OS_NEUTRON_CONFIG_FILES', 'neutron.conf;plugins/ml2/ml2_conf.ini')
_argv, sys.argv = sys.argv, sys.argv[:1]   # neutron parses sys.argv with oslo.config
from neutron.wsgi.api import application  # noqa
sys.argv = _argv
EOC
    local t0; t0=$(now)
    # shellcheck disable=SC2086
    "$V/neutron-db-manage" $CONF upgrade heads >"$BASE/log/db-manage.log" 2>&1 \
        || { tail -n 20 "$BASE/log/db-manage.log" >&2; die "neutron-db-manage upgrade heads failed"; }
    log "database migrated in $(since "$t0") s"
}

start_ovs() {   # the userspace datapath: this kernel has no openvswitch module
    mkdir -p /var/run/openvswitch /var/log/openvswitch /var/lib/openvswitch
    if ! ovs-vsctl --timeout=2 show >/dev/null 2>&1; then
        rm -f /var/lib/openvswitch/conf.db
        ovsdb-tool create /var/lib/openvswitch/conf.db /usr/share/openvswitch/vswitch.ovsschema
        ovsdb-server /var/lib/openvswitch/conf.db --remote=punix:/var/run/openvswitch/db.sock \
            --remote=db:Open_vSwitch,Open_vSwitch,manager_options --pidfile --detach \
            --log-file="$BASE/log/ovsdb-server.log"
        ovs-vsctl --no-wait init
        ovs-vswitchd --pidfile --detach --log-file="$BASE/log/ovs-vswitchd.log"
        cp /var/run/openvswitch/ovsdb-server.pid /var/run/openvswitch/ovs-vswitchd.pid "$BASE/pids/"
    fi
    ovs-vsctl set-manager ptcp:6640:127.0.0.1
    ovs-vsctl --may-exist add-br br-int -- set bridge br-int datapath_type=netdev
    ovs-vsctl --may-exist add-br br-phys1 -- set bridge br-phys1 datapath_type=netdev
}

running() {   # the services of SERVICES whose recorded process is alive
    local s out=""
    for s in "${SERVICES[@]}"; do
        pid_alive "$(cat "$BASE/pids/$s.pid" 2>/dev/null || true)" && out="$out $s"
    done
    echo "${out# }"
}

wait_up() {   # up to 180 s for the API and the agent; fails with the agent's log
    local i
    for i in $(seq 1 360); do agent_up && return 0; sleep 0.5; done
    tail -n 30 "$BASE/log/ovs-agent.log" >&2
    die "the OVS agent did not come up within 180 s (logs in $BASE/log)"
}

start() {
    if agent_up; then log "neutron: already up at $URL (host $NEUTRON_HOST)"; return 0; fi
    # Its processes run but do not answer yet (a slow API under load, or the agent's
    # state reports late after a broker restart): wait for them. Starting a second copy
    # here put two OVS agents of one host on br-int, each deleting the flows of the
    # other's cookie at its first loop, and truncated the log the first one's readiness
    # is read from (so status said down from then on).
    local alive; alive=$(running)
    if [ -n "$alive" ]; then
        log "neutron: $alive already running; waiting for the agent instead of starting a second copy"
        wait_up
        log "neutron: up at $URL (host $NEUTRON_HOST)"
        return 0
    fi
    install
    setup
    start_ovs
    local t0; t0=$(now)
    export PATH=$V:$PATH    # privsep-helper must be on PATH
    cd "$BASE"
    : >"$BASE/log/ovs-agent.log"
    # shellcheck disable=SC2086
    setsid nohup "$V/neutron-rpc-server" $CONF >log/rpc-server.log 2>&1 </dev/null & echo $! >pids/rpc-server.pid
    setsid nohup "$V/gunicorn" --chdir "$BASE/etc" --bind "127.0.0.1:$PORT" --workers 1 --threads 8 \
        --timeout 120 neutron_api_wsgi:application >log/api.log 2>&1 </dev/null & echo $! >pids/api.pid
    # shellcheck disable=SC2086
    setsid nohup "$V/neutron-openvswitch-agent" $CONF >log/ovs-agent.log 2>&1 </dev/null & echo $! >pids/ovs-agent.pid
    wait_up
    log "neutron API, RPC server and OVS agent up in $(since "$t0") s at $URL (host $NEUTRON_HOST)"
}

stop() {
    local s pid stopped=0 priv files=()
    # privsep daemons are re-parented to init: remember them before the agent goes
    priv=$(pgrep -f "privsep-helper --config-file $BASE/etc/neutron.conf" || true)
    for s in "${SERVICES[@]}"; do files+=("$BASE/pids/$s.pid"); done
    stop_pidfiles "${files[@]}" && stopped=1
    for pid in $priv; do kill "$pid" 2>/dev/null || true; done
    [ "$stopped" = 1 ] && log "neutron: stopped" || log "neutron: not started by this script"
    if command -v ovs-vsctl >/dev/null && ovs-vsctl --timeout=2 show >/dev/null 2>&1; then
        for s in br-int br-phys1; do ovs-vsctl --if-exists del-br "$s" 2>/dev/null || true; done
        if [ -f "$BASE/pids/ovs-vswitchd.pid" ]; then   # only when start started OVS
            ovs-appctl -t ovs-vswitchd exit 2>/dev/null || true
            ovs-appctl -t ovsdb-server exit 2>/dev/null || true
            rm -f "$BASE"/pids/ovs-*.pid "$BASE"/pids/ovsdb-*.pid
        fi
    fi
    if [ -f "$BASE/etc/neutron.conf" ]; then
        mysql -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $DBNAME;" 2>/dev/null || true
        rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
    fi
    rm -rf "$BASE/state" "$BASE/etc"
}

status() {
    if agent_up; then echo "neutron: up at $URL (host $NEUTRON_HOST)"
    elif [ -n "$(running)" ]; then echo "neutron: starting (running: $(running); the OVS agent is not alive yet)"
    else echo "neutron: down"; fi
}

print_env() {
    cat <<ENV
BERTH_NEUTRON_URL=$URL
BERTH_NEUTRON_HOST=$NEUTRON_HOST
BERTH_NEUTRON_BASE=$BASE
ENV
}

[ "$(id -u)" = 0 ] || die "run as root"
# start and stop hold a lock, so that two of them never overlap: a start that found no
# process yet (another start still installing or migrating) would set up the database,
# vhost and bridges again under it and launch a second copy. The daemons do not inherit
# the lock (flock -o): it is free again when the command ends.
LOCK=${BASE%/*}/neutron-ci.lock
if [[ ${1:-} =~ ^(start|stop)$ ]] && [ -z "${NEUTRON_CI_LOCKED:-}" ]; then
    mkdir -p "${LOCK%/*}"
    NEUTRON_CI_LOCKED=1 exec flock -o -w 1800 "$LOCK" bash "$0" "$1"
fi
ci_main 23 "${1:-}"
