#!/usr/bin/env bash
# The real kuryr-libnetwork 18 (PyPI) as the Docker network and IPAM plugin "kuryr" of this
# host's engine, on the project's Neutron (neutron-ci.sh), for berth's [network]driver = kuryr
# and its integration tests (tests/integration/network/kuryr).
#
#   kuryr-ci.sh install   the venv (pinned by constraints/kuryr.txt, stamped), skipped when there
#   kuryr-ci.sh start     install, write kuryr.conf and the plugin spec file, start kuryr-server;
#                         only checks it when it answers already. Neutron must be up (it is
#                         shared: this script never starts, stops or restarts it)
#   kuryr-ci.sh stop      stop what start started (by pid), remove the spec file
#   kuryr-ci.sh status    "kuryr: up ..." or "kuryr: down"
#   kuryr-ci.sh env       BERTH_KURYR_URL, BERTH_KURYR_BASE
#
# kuryr binds every port it plugs to its own hostname (socket.gethostname(): kuryr-lib has no
# option for it), and a port is bound only on a host whose OVS agent runs: so kuryr-server
# runs in a UTS namespace of its own whose hostname is Neutron's host ($NEUTRON_HOST), the
# [DEFAULT]host berth runs with. Neutron here is noauth: kuryr reaches it through
# keystoneauth's "none" plugin and its endpoint (no Keystone token would be checked).
# capability_scope = local: Zun's devstack sets global, which needs a Docker cluster store
# (etcd) that this engine does not have (docs/networking.md, "kuryr").
# process_external_connectivity = false, as Zun's devstack: a container's exposed ports are
# Neutron security group rules made by berth, not rules kuryr adds for Docker's -p.
# Needs root, Open vSwitch with br-int (neutron-ci.sh start), Docker.
set -euo pipefail
BASE=${BASE:-${BERTH_CI_STATE:-/var/tmp/berth-ci}/kuryr}
NEUTRON_HOST=${NEUTRON_HOST:-berth-neutron-ci}
NEUTRON_URL=http://127.0.0.1:${BERTH_NEUTRON_PORT:-9696}
PORT=${BERTH_KURYR_PORT:-23750}
URL="http://127.0.0.1:$PORT"
KURYR_VERSION=18.0.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONSTRAINTS=$HERE/constraints/kuryr.txt
SPEC=${BERTH_KURYR_SPEC:-/etc/docker/plugins/kuryr.spec}
V=$BASE/venv/bin

CI_TAG=kuryr-ci
# shellcheck source=lib.sh
source "$HERE/lib.sh"

answers() {   # the plugin's handshake, as dockerd does it
    curl -fsS -m 5 -X POST "$URL/Plugin.Activate" 2>/dev/null | grep -q NetworkDriver
}

install() {
    local want; want="kuryr-libnetwork==$KURYR_VERSION $(md5sum <"$CONSTRAINTS" | cut -c1-32)"
    [ -f "$BASE/venv/.berth-installed" ] && [ "$(cat "$BASE/venv/.berth-installed")" = "$want" ] && return 0
    local t0; t0=$(now); mkdir -p "$BASE"; rm -rf "$BASE/venv"
    python3 -m venv "$BASE/venv"
    "$V/pip" install -q --disable-pip-version-check -c "$CONSTRAINTS" \
        "kuryr-libnetwork==$KURYR_VERSION" >"$BASE/pip.log" 2>&1 \
        || { tail -n 20 "$BASE/pip.log" >&2; die "pip install kuryr-libnetwork==$KURYR_VERSION failed"; }
    echo "$want" >"$BASE/venv/.berth-installed"
    log "venv $BASE/venv ready in $(since "$t0") s"
}

write_config() {
    mkdir -p "$BASE"/{etc,log,pids}
    # bindir: kuryr-lib's port binding scripts (ovs: add the veth to br-int with iface-id)
    cat >"$BASE/etc/kuryr.conf" <<EOC
[DEFAULT]
kuryr_uri = $URL
bindir = $BASE/venv/libexec/kuryr
capability_scope = local
process_external_connectivity = false
log_file = $BASE/log/kuryr-server.log
debug = false
[neutron]
auth_type = none
endpoint = $NEUTRON_URL
# kuryr waits for ACTIVE itself only with this; berth waits for it (and says why not)
vif_plugging_is_fatal = false
[binding]
default_driver = kuryr.lib.binding.drivers.veth
EOC
    mkdir -p "$(dirname "$SPEC")"
    echo "$URL" >"$SPEC"
}

start() {
    if answers; then log "kuryr: already up at $URL"; return 0; fi
    command -v ovs-vsctl >/dev/null && ovs-vsctl --timeout=5 br-exists br-int \
        || die "Open vSwitch with br-int is not there: start Neutron first (neutron-ci.sh start)"
    curl -fsS -m 10 "$NEUTRON_URL/v2.0/extensions" >/dev/null \
        || die "Neutron does not answer at $NEUTRON_URL: start it first (neutron-ci.sh start)"
    install
    write_config
    local t0; t0=$(now)
    # its own UTS namespace: gethostname() is Neutron's host there (see above). PATH: the
    # binding script runs ovs-vsctl and ip.
    PATH="$V:/usr/sbin:/usr/bin:/sbin:/bin" setsid nohup unshare --uts sh -c \
        "hostname '$NEUTRON_HOST' && exec '$V/kuryr-server' --config-file '$BASE/etc/kuryr.conf'" \
        >"$BASE/log/kuryr-server.out" 2>&1 </dev/null & echo $! >"$BASE/pids/kuryr-server.pid"
    local i
    for i in $(seq 1 300); do
        answers && break
        pid_alive "$(cat "$BASE/pids/kuryr-server.pid")" || { tail -n 30 "$BASE/log/kuryr-server.out" "$BASE/log/kuryr-server.log" >&2 || true; die "kuryr-server exited"; }
        sleep 0.2
    done
    answers || { tail -n 30 "$BASE/log/kuryr-server.log" >&2 || true; die "kuryr-server did not answer within 60 s"; }
    log "kuryr-server up in $(since "$t0") s at $URL (host $NEUTRON_HOST, spec $SPEC)"
}

stop() {
    if stop_pidfiles "$BASE/pids/kuryr-server.pid"; then log "kuryr: stopped"
    else log "kuryr: not started by this script"; fi
    [ -f "$SPEC" ] && grep -qx "$URL" "$SPEC" && rm -f "$SPEC"
    return 0
}

status() {
    if answers; then echo "kuryr: up at $URL (spec $SPEC)"; else echo "kuryr: down"; fi
}

print_env() {
    cat <<ENV
BERTH_KURYR_URL=$URL
BERTH_KURYR_BASE=$BASE
ENV
}

ci_main 12 "${1:-}"
