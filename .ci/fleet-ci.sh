#!/usr/bin/env bash
# A fleet of N berth compute nodes on this machine, for the tests of local networks that
# span nodes (docs/multi-node.md, "Local networks that span the nodes"):
#
#   fleet-ci.sh start N      (ci-services.sh fleet-start N)   N = 2 or 3
#   fleet-ci.sh stop         (ci-services.sh fleet-stop)
#   fleet-ci.sh restart-cni NODE   (SIGKILL the node's berth-cni-daemon, then start it again)
#
# Each node ovlfI is a network namespace "berth-ovlfI" with its own dockerd (ci-services.sh
# node-start: own data root, exec root and socket unix:///run/berth-node-ovlfI.sock; images
# loaded from the host's engine, which has them from the 127.0.0.1:5000 registry: never an
# outside pull), and berth-compute and berth-cni-daemon running inside it. The nodes share an
# underlay bridge in a namespace of its own ("berth-ovlfwire", 198.18.39.0/24: node I is .I,
# the host .254 through the veth "bovlf0"). berth-api, PostgreSQL (database berth_fleet_ovl)
# and RabbitMQ (vhost berth_fleet_ovl) stay on the host; the nodes reach the host's loopback
# through fleet_relay.py. Prints BERTH_FLEET_URL=... (the API root, noauth, token "admin") and
# BERTH_FLEET_HOSTS=... (the nodes' host names). State and logs: $BERTH_CI_STATE/ovl-fleet.
# The API's port: $BERTH_FLEET_API_PORT, or a free one.
#
# Several fleets at once (a bench beside the CI's tests, two engineers): BERTH_FLEET_NAME=P
# (lower-case letters and digits, at most 10) names everything after P instead of "ovlf":
# nodes PI, namespaces berth-PI and berth-Pwire, the host's veth bP0, database and vhost
# berth_fleet_P, state $BERTH_CI_STATE/P-fleet, and an underlay 198.18.X.0/24 of its own
# (BERTH_FLEET_UNDERLAY=198.18.X to choose it; one some interface of the host holds
# already is refused). Give the same BERTH_FLEET_NAME to fleet-stop and restart-cni;
# fleet-stop removes a named fleet's state, logs and node data (the default one's stay).
# BERTH_FLEET_OVERLAY=false starts the fleet with [network]local_overlay off (each node's
# local networks its own: bench P16C's baseline).
set -euo pipefail

STATE=${BERTH_CI_STATE:-/var/tmp/berth-ci}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=${BERTH_FLEET_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=/work/main/.venv/bin/python
PREFIX=${BERTH_FLEET_NAME:-ovlf}
[[ "$PREFIX" =~ ^[a-z][a-z0-9]{0,9}$ ]] || { echo "[fleet-ci] ERROR: BERTH_FLEET_NAME=$PREFIX: lower-case letters and digits, at most 10" >&2; exit 1; }
if [ "$PREFIX" = ovlf ]; then
    FLEET=$STATE/ovl-fleet NAME=berth_fleet_ovl UNDERLAY=${BERTH_FLEET_UNDERLAY:-198.18.39}
else    # another fleet's underlay: a /24 of 198.18.40-239 chosen from the name
    FLEET=$STATE/$PREFIX-fleet NAME=berth_fleet_$PREFIX
    UNDERLAY=${BERTH_FLEET_UNDERLAY:-198.18.$(( 40 + $(printf '%s' "$PREFIX" | cksum | cut -d' ' -f1) % 200 ))}
fi
OVERLAY=${BERTH_FLEET_OVERLAY:-true}
IMAGE=${BERTH_FLEET_IMAGE:-127.0.0.1:5000/berth-test/busybox:latest}
WIRE=berth-${PREFIX}wire
HOSTVETH=b${PREFIX}0

log() { printf '[fleet-ci] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
wait_for() { local t=$1; shift; local end=$(( $(date +%s) + t )); until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.3; done; }
berth() { PYTHONPATH=$ROOT "$PY" -m "$@"; }
psql_admin() { su postgres -c "psql -v ON_ERROR_STOP=1 -q" >/dev/null; }

nodes() { local i; for ((i = 1; i <= $1; i++)); do echo "$PREFIX$i"; done; }
count() { cat "$FLEET/count" 2>/dev/null || echo 0; }

underlay() {   # underlay N: the wire namespace, its bridge, the host's veth, one veth per node
    ip netns add "$WIRE"
    ip netns exec "$WIRE" ip link add ul0 type bridge
    ip netns exec "$WIRE" ip link set ul0 up
    ip link add "$HOSTVETH" type veth peer name host netns "$WIRE"
    ip netns exec "$WIRE" ip link set host master ul0 up
    ip addr add "$UNDERLAY.254/24" dev "$HOSTVETH"
    ip link set "$HOSTVETH" up
    local i
    for ((i = 1; i <= $1; i++)); do
        ip link add "n$i" netns "$WIRE" type veth peer name ul0 netns "berth-$PREFIX$i"
        ip netns exec "$WIRE" ip link set "n$i" master ul0 up
        ip netns exec "berth-$PREFIX$i" ip addr add "$UNDERLAY.$i/24" dev ul0
        ip netns exec "berth-$PREFIX$i" ip link set ul0 up
    done
}

write_configs() {
    mkdir -p "$FLEET"
    cat >"$FLEET/common.conf" <<CONF
[DEFAULT]
transport_url = rabbit://berth:berth@127.0.0.1:5672/$NAME
image_pull_policy = ifnotpresent
service_down_time = ${BERTH_FLEET_DOWN_TIME:-30}
report_interval = 5
periodic_interval_max = 5

[compute]
# a node forced down (os-services force-down) has its containers recreated elsewhere
evacuate_on_host_down = true

[database]
connection = postgresql+psycopg://berth:berth@127.0.0.1:5432/$NAME

[api]
auth_strategy = noauth
host_ip = 127.0.0.1
port = $API_PORT

[network]
driver = local
local_overlay = $OVERLAY
local_overlay_interval = 1
CONF
    local i
    for ((i = 1; i <= $1; i++)); do
        mkdir -p "$FLEET/$PREFIX$i"
        cat >"$FLEET/$PREFIX$i/node.conf" <<CONF
[DEFAULT]
host = $PREFIX$i
my_ip = $UNDERLAY.$i
state_path = $FLEET/$PREFIX$i

[docker]
api_url = unix:///run/berth-node-$PREFIX$i.sock
CONF
    done
}

start_proc() {   # start_proc NAME NETNS|- MODULE CONFIGS...: a berth process, pid in $FLEET/NAME.pid
    local name=$1 netns=$2 module=$3; shift 3
    local prefix=()
    [ "$netns" = - ] || prefix=(ip netns exec "$netns")
    local args=() c
    for c in "$@"; do args+=(--config-file "$c"); done
    ( PYTHONPATH=$ROOT exec "${prefix[@]}" "$PY" -m "$module" "${args[@]}" \
        >"$FLEET/$name.log" 2>&1 </dev/null & echo $! >"$FLEET/$name.pid" )
}

start() {
    local n=${1:-2} t0; t0=$(now)
    [[ "$n" =~ ^[1-9]$ ]] || die "fleet-start N: N is a small number (2 or 3)"
    [ -e "/run/netns/$WIRE" ] && die "a fleet $PREFIX runs already (BERTH_FLEET_NAME=$PREFIX fleet-stop first)"
    [ -z "$(ip -4 -o addr show to "$UNDERLAY.0/24")" ] \
        || die "an interface of the host holds an address of $UNDERLAY.0/24 already: choose another underlay with BERTH_FLEET_UNDERLAY=198.18.X"
    mkdir -p "$FLEET" && echo "$n" >"$FLEET/count"
    API_PORT=${BERTH_FLEET_API_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
    local node
    for node in $(nodes "$n"); do bash "$HERE/ci-services.sh" node-start "$node"; done
    docker image inspect "$IMAGE" >/dev/null 2>&1 || docker pull "$IMAGE" >/dev/null
    for node in $(nodes "$n"); do
        docker save "$IMAGE" | docker -H "unix:///run/berth-node-$node.sock" load >/dev/null
    done
    underlay "$n"
    psql_admin <<SQL
CREATE DATABASE $NAME OWNER berth;
SQL
    rabbitmqctl -q add_vhost "$NAME" >/dev/null
    rabbitmqctl -q set_permissions -p "$NAME" berth ".*" ".*" ".*" >/dev/null
    write_configs "$n"
    berth berth.cmd.main db upgrade --config-file "$FLEET/common.conf" >"$FLEET/db-upgrade.log" 2>&1 \
        || die "berth db upgrade failed: $(tail -n 5 "$FLEET/db-upgrade.log")"
    local paths; paths=$(for node in $(nodes "$n"); do printf '/run/netns/berth-%s,' "$node"; done)
    ( exec "$PY" "$HERE/fleet_relay.py" "${paths%,}" 5432,5672 >"$FLEET/relay.log" 2>&1 </dev/null & echo $! >"$FLEET/relay.pid" )
    wait_for 20 grep -q ready "$FLEET/relay.log" || die "relay did not start: $(cat "$FLEET/relay.log")"
    start_proc api - berth.cmd.api "$FLEET/common.conf"
    for node in $(nodes "$n"); do
        start_proc "$node-cni" "berth-$node" berth.cmd.cni_daemon "$FLEET/common.conf" "$FLEET/$node/node.conf"
        start_proc "$node-compute" "berth-$node" berth.cmd.compute "$FLEET/common.conf" "$FLEET/$node/node.conf"
    done
    wait_for 90 curl -fs -o /dev/null "http://127.0.0.1:$API_PORT/healthz" \
        || die "berth-api did not answer: $(tail -n 20 "$FLEET/api.log")"
    for node in $(nodes "$n"); do
        wait_for 120 services_up "$node" || die "node $node did not report: $(tail -n 20 "$FLEET/$node-compute.log")"
    done
    log "fleet $PREFIX of $n started in $(since "$t0") s (logs in $FLEET)"
    echo "BERTH_FLEET_URL=http://127.0.0.1:$API_PORT/v1"
    echo "BERTH_FLEET_HOSTS=$(nodes "$n" | tr '\n' ' ' | sed 's/ $//')"
}

services_up() {   # the node's agent has registered and reports
    curl -fs -H "X-Auth-Token: admin" "http://127.0.0.1:$API_PORT/v1/services" 2>/dev/null \
        | "$PY" -c 'import json, sys; sys.exit(not any(s["host"] == sys.argv[1] and s["state"] == "up" for s in json.load(sys.stdin)["services"]))' "$1"
}

stop_pidfile() {
    local f=$1 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait_for 20 eval "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

stop() {
    local n node; n=$(count)
    for node in $(nodes "$n"); do
        stop_pidfile "$FLEET/$node-compute.pid"
        stop_pidfile "$FLEET/$node-cni.pid"
    done
    stop_pidfile "$FLEET/api.pid"
    stop_pidfile "$FLEET/relay.pid"
    for node in $(nodes "$n"); do
        # the node's containers go with its engine's data; its bridges and devices with its netns
        docker -H "unix:///run/berth-node-$node.sock" rm -f $(docker -H "unix:///run/berth-node-$node.sock" ps -aq 2>/dev/null) >/dev/null 2>&1 || true
        bash "$HERE/ci-services.sh" node-stop "$node" || true
    done
    ip link del "$HOSTVETH" 2>/dev/null || true
    [ -e "/run/netns/$WIRE" ] && ip netns del "$WIRE"
    psql_admin <<SQL || true
DROP DATABASE IF EXISTS $NAME WITH (FORCE);
SQL
    rabbitmqctl -q delete_vhost "$NAME" >/dev/null 2>&1 || true
    rm -f "$FLEET/count"
    if [ "$PREFIX" != ovlf ]; then   # a named fleet (a bench's, a docs run's) leaves nothing
        for node in $(nodes "$n"); do rm -rf "${STATE:?}/nodes/$node"; done
        rm -rf "$FLEET"
    fi
    log "fleet $PREFIX stopped"
}

restart_cni() {
    local node=$1 pid
    [ -f "$FLEET/$node/node.conf" ] || die "no node $node in the fleet"
    pid=$(cat "$FLEET/$node-cni.pid" 2>/dev/null || true)
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    start_proc "$node-cni" "berth-$node" berth.cmd.cni_daemon "$FLEET/common.conf" "$FLEET/$node/node.conf"
    wait_for 60 ip netns exec "berth-$node" curl -fs -o /dev/null http://127.0.0.1:9036/healthz \
        || die "the CNI daemon of $node did not answer: $(tail -n 20 "$FLEET/$node-cni.log")"
    log "CNI daemon of $node restarted"
}

[ "$(id -u)" = 0 ] || die "run as root"
case "${1:-}" in
    start) shift; start "$@" ;;
    stop)  stop ;;
    restart-cni) restart_cni "$2" ;;
    *) die "usage: fleet-ci.sh start N | stop | restart-cni NODE" ;;
esac
