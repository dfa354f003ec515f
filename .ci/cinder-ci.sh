#!/usr/bin/env bash
# A real OpenStack Cinder 29 (cinder-api, cinder-scheduler, cinder-volume from PyPI) on
# loopback, for the cinder volume driver's integration tests. Adapted from
# shared/tools/cinder/cinder-ci.sh (shared/infra.md section 9).
#
#   cinder-ci.sh install   apt packages and the venv, both skipped when already there
#                          (the venv is pinned by constraints/cinder.txt and stamped)
#   cinder-ci.sh start     install, set up (database, vhost, config, the share) and start
#                          the three services; only checks them when they answer already
#   cinder-ci.sh stop      stop what start started, drop its database and vhost, remove its state
#   cinder-ci.sh status    "cinder: up ..." or "cinder: down"
#   cinder-ci.sh env       BERTH_CINDER_URL, BERTH_CINDER_PROJECT, BERTH_CINDER_BASE
#
# This kernel has no NFS, iSCSI or device-mapper, so the backend is Cinder's own NFS driver
# with its "share" emulated: a local directory bind-mounted on the very mount point Cinder
# and os-brick compute for it (<nfs_mount_point_base>/<md5 of the share>); os-brick finds it
# in /proc/mounts and never runs mount.nfs. Everything else is unpatched Cinder.
#
# auth_strategy = noauth_include_project_id: the token "<user>:<project>" is the caller
# (the project must be hex). Database: PostgreSQL (DB=pgsql, the default: ci-services.sh
# manages it) or MariaDB on 127.0.0.1:3306 as root (DB=mysql). RabbitMQ: vhost cinder_ci
# for the user berth (created by ci-services.sh start rabbitmq).
set -euo pipefail
BASE=${BASE:-${BERTH_CI_STATE:-/var/tmp/berth-ci}/cinder}
PROJECT=${PROJECT:-4b6c6f8e0a2e4e1d9a6f6b3c2d1e0f00}
DB=${DB:-pgsql}
DBNAME=cinder_ci
VHOST=cinder_ci
PORT=${BERTH_CINDER_PORT:-8776}
CINDER_VERSION=29.0.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONSTRAINTS=$HERE/constraints/cinder.txt
SHARE="127.0.0.1:$BASE/export"
HASH=$(printf '%s' "$SHARE" | md5sum | cut -d' ' -f1)
V=$BASE/venv/bin
URL="http://127.0.0.1:$PORT/v3/$PROJECT"
SERVICES=(api scheduler volume)

CI_TAG=cinder-ci
# shellcheck source=lib.sh
source "$HERE/lib.sh"

services_up() {   # the API answers and both the scheduler and the volume service report up
    local up
    up=$(curl -fsS -m 3 -H "X-Auth-Token: admin:$PROJECT" "$URL/os-services" 2>/dev/null \
         | grep -o '"state": "up"' | wc -l) || return 1
    [ "${up:-0}" -ge 2 ]
}

install() {
    local t0
    # mount.nfs must exist; qemu-img runs on every create
    apt_install "$BASE/apt.log" nfs-common qemu-utils e2fsprogs util-linux
    local want; want="cinder==$CINDER_VERSION $(md5sum <"$CONSTRAINTS" | cut -c1-32)"
    [ -f "$BASE/venv/.berth-installed" ] && [ "$(cat "$BASE/venv/.berth-installed")" = "$want" ] && return 0
    t0=$(now); mkdir -p "$BASE"; rm -rf "$BASE/venv"
    python3 -m venv "$BASE/venv"
    "$V/pip" install -q --disable-pip-version-check -c "$CONSTRAINTS" "cinder==$CINDER_VERSION" \
        python-cinderclient PyMySQL psycopg2-binary >"$BASE/pip.log" 2>&1 \
        || { tail -n 20 "$BASE/pip.log" >&2; die "pip install cinder==$CINDER_VERSION failed"; }
    echo "$want" >"$BASE/venv/.berth-installed"
    log "venv $BASE/venv ready in $(since "$t0") s"
}

setup() {
    mkdir -p "$BASE"/{etc,logs,state/lock,mnt/"$HASH",export}
    setup_database
    rabbitmqctl -q list_vhosts | grep -qx "$VHOST" || rabbitmqctl -q add_vhost "$VHOST"
    rabbitmqctl -q set_permissions -p "$VHOST" berth '.*' '.*' '.*'
    cp "$BASE/venv/etc/cinder/api-paste.ini" "$BASE/etc/"
    echo "$SHARE" >"$BASE/etc/nfs_shares"
    cat >"$BASE/etc/cinder.conf" <<CONF
[DEFAULT]
host = berth-ci
my_ip = 127.0.0.1
auth_strategy = noauth_include_project_id
transport_url = rabbit://berth:berth@127.0.0.1:5672/$VHOST
state_path = $BASE/state
log_dir = $BASE/logs
api_paste_config = $BASE/etc/api-paste.ini
osapi_volume_listen = 127.0.0.1
osapi_volume_listen_port = $PORT
osapi_volume_workers = 1
enabled_backends = nfs1
default_volume_type = nfs1
[database]
connection = $(db_url)
[oslo_concurrency]
lock_path = $BASE/state/lock
[coordination]
backend_url = file://$BASE/state/coord
[cinder_sys_admin]
helper_command = $V/privsep-helper --config-file $BASE/etc/cinder.conf
[privsep_osbrick]
helper_command = $V/privsep-helper --config-file $BASE/etc/cinder.conf
[nfs1]
volume_driver = cinder.volume.drivers.nfs.NfsDriver
volume_backend_name = nfs1
nfs_shares_config = $BASE/etc/nfs_shares
nfs_mount_point_base = $BASE/mnt
nfs_sparsed_volumes = true
nfs_snapshot_support = false
nas_secure_file_permissions = false
nas_secure_file_operations = false
CONF
    mountpoint -q "$BASE/mnt/$HASH" || mount --bind "$BASE/export" "$BASE/mnt/$HASH"   # the emulated share
    local t0; t0=$(now)
    "$V/cinder-manage" --config-file "$BASE/etc/cinder.conf" db sync >"$BASE/logs/dbsync.out" 2>&1 \
        || { tail -n 20 "$BASE/logs/dbsync.out" >&2; die "cinder-manage db sync failed"; }
    log "db sync ($DB) in $(since "$t0") s"
}

start() {
    if services_up; then log "cinder: already up at $URL"; return 0; fi
    install
    setup
    local t0 s; t0=$(now)
    for s in "${SERVICES[@]}"; do
        if pid_is "$(cat "$BASE/$s.pid" 2>/dev/null)" "cinder-$s"; then continue; fi
        setsid nohup "$V/cinder-$s" --config-file "$BASE/etc/cinder.conf" >"$BASE/logs/$s.stdout" 2>&1 </dev/null &
        echo $! >"$BASE/$s.pid"
    done
    local i
    for i in $(seq 1 240); do services_up && break; sleep 0.25; done
    services_up || { tail -n 20 "$BASE"/logs/*.log >&2; die "cinder did not come up within 60 s (logs in $BASE/logs)"; }
    log "cinder-api, -scheduler and -volume up in $(since "$t0") s at $URL"
    local h="X-Auth-Token: admin:$PROJECT"
    if ! curl -fsS -m 10 -H "$h" "$URL/types" | grep -q '"name": "nfs1"'; then
        curl -fsS -m 10 -H "$h" -H 'Content-Type: application/json' -X POST "$URL/types" \
            -d '{"volume_type": {"name": "nfs1", "extra_specs": {"volume_backend_name": "nfs1"}}}' >/dev/null \
            || die "could not create the volume type nfs1"
    fi
}

stop() {
    local s files=()
    for s in "${SERVICES[@]}"; do files+=("$BASE/$s.pid"); done
    if stop_pidfiles --match "$BASE/etc/cinder.conf" "${files[@]}"; then log "cinder: stopped"
    else log "cinder: not started by this script"; fi
    # leftovers of a run: file volumes still loop-mounted (mount points under the tests' own
    # directories), then the emulated share
    if [ -d "$BASE/export" ]; then
        local f dev
        for f in "$BASE"/export/volume-*; do
            [ -e "$f" ] || continue
            for dev in $(losetup -j "$f" -O NAME -n 2>/dev/null); do
                findmnt -rn -S "$dev" -o TARGET | while read -r t; do umount -l "$t" || true; done
                losetup -d "$dev" 2>/dev/null || true
            done
        done
    fi
    if mountpoint -q "$BASE/mnt/$HASH" 2>/dev/null; then umount "$BASE/mnt/$HASH" || umount -l "$BASE/mnt/$HASH"; fi
    if [ -f "$BASE/etc/cinder.conf" ]; then
        drop_database
        rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
    fi
    rm -rf "$BASE/state" "$BASE/mnt" "$BASE/export" "$BASE/etc"
}

status() { services_up && echo "cinder: up at $URL" || echo "cinder: down"; }

print_env() {
    cat <<ENV
BERTH_CINDER_URL=http://127.0.0.1:$PORT/v3
BERTH_CINDER_PROJECT=$PROJECT
BERTH_CINDER_BASE=$BASE
ENV
}

ci_main 23 "${1:-}"
