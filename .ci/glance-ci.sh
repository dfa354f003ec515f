#!/usr/bin/env bash
# A real OpenStack Glance 33 (glance-api from PyPI, under gunicorn) on loopback, for the
# glance image driver's integration tests and benchmarks.
#
#   glance-ci.sh install   the venv, skipped when already there (pinned by
#                          constraints/glance.txt and stamped)
#   glance-ci.sh start     install, set up (database, config, file store, Keystone
#                          catalog) and start glance-api; only checks it when it answers
#   glance-ci.sh stop      stop what start started, drop its database, remove its images
#   glance-ci.sh status    "glance: up ..." or "glance: down"
#   glance-ci.sh env       BERTH_GLANCE_URL, BERTH_GLANCE_USER, BERTH_GLANCE_PASSWORD, ...
#
# Glance stores images in its file store ($BASE/images) and its records in the database
# glance_ci: MariaDB on 127.0.0.1:3306 as root (DB=mysql, the default) or PostgreSQL
# (DB=pgsql). It sits behind the CI's Keystone (ci-services.sh start keystone, started
# before it): user glance_ci (admin in project "service") validates tokens for it, and the
# catalog gets the service "image" with its three endpoints in region RegionOne
# (glance_keystone_setup.py). Callers authenticate as the CI's admin (admin/admin).
set -euo pipefail
BASE=${BASE:-${BERTH_CI_STATE:-/var/tmp/berth-ci}/glance}
DB=${DB:-mysql}
DBNAME=glance_ci
PORT=${BERTH_GLANCE_PORT:-9292}
KEYSTONE_URL=${BERTH_KEYSTONE_URL:-http://127.0.0.1:${BERTH_KEYSTONE_PORT:-5001}/v3}
GLANCE_VERSION=33.0.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONSTRAINTS=$HERE/constraints/glance.txt
VENV=${BERTH_CI_STATE:-/var/tmp/berth-ci}/venv-glance
V=$VENV/bin
URL="http://127.0.0.1:$PORT"
SERVICE_PASSWORD=glance-ci

CI_TAG=glance-ci
# shellcheck source=lib.sh
source "$HERE/lib.sh"
# gunicorn retitles itself ("gunicorn: master [glance.wsgi.api:application]") when
# setproctitle is installed, as it is in Glance's venv: match the application's name.
APP=glance.wsgi.api

api_up() { curl -fsS -m 3 -o /dev/null "$URL/versions" 2>/dev/null; }

install() {
    local want t0; want="glance==$GLANCE_VERSION $(md5sum <"$CONSTRAINTS" | cut -c1-32)"
    [ -f "$VENV/.berth-installed" ] && [ "$(cat "$VENV/.berth-installed")" = "$want" ] && return 0
    t0=$(now); rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$V/pip" install -q --disable-pip-version-check -c "$CONSTRAINTS" "glance==$GLANCE_VERSION" \
        gunicorn PyMySQL psycopg2-binary >"$VENV.pip.log" 2>&1 \
        || { tail -n 20 "$VENV.pip.log" >&2; die "pip install glance==$GLANCE_VERSION failed"; }
    echo "$want" >"$VENV/.berth-installed"
    log "venv $VENV ready in $(since "$t0") s"
}

setup() {
    curl -fsS -m 5 -o /dev/null "$KEYSTONE_URL/" || die "Keystone does not answer at $KEYSTONE_URL (ci-services.sh start keystone first)"
    mkdir -p "$BASE"/{etc,logs,images,staging,tasks,lock}
    setup_database
    cp "$VENV/etc/glance/glance-api-paste.ini" "$BASE/etc/"
    cat >"$BASE/etc/glance-api.conf" <<CONF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = $PORT
workers = 1
log_dir = $BASE/logs
enabled_backends = berth_file:file
# an image of any size, and no import workers (uploads go straight to the store)
image_size_cap = 1099511627776
enabled_import_methods = []
[glance_store]
default_backend = berth_file
[berth_file]
filesystem_store_datadir = $BASE/images
[os_glance_staging_store]
filesystem_store_datadir = $BASE/staging
[os_glance_tasks_store]
filesystem_store_datadir = $BASE/tasks
[database]
connection = $(db_url)
[oslo_concurrency]
lock_path = $BASE/lock
[oslo_messaging_notifications]
driver = noop
[paste_deploy]
flavor = keystone
config_file = $BASE/etc/glance-api-paste.ini
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE_URL
auth_url = $KEYSTONE_URL
auth_type = password
username = $DBNAME
password = $SERVICE_PASSWORD
project_name = service
user_domain_id = default
project_domain_id = default
service_token_roles_required = true
CONF
    local t0; t0=$(now)
    "$V/glance-manage" --config-file "$BASE/etc/glance-api.conf" db_sync >"$BASE/logs/dbsync.out" 2>&1 \
        || { tail -n 20 "$BASE/logs/dbsync.out" >&2; die "glance-manage db_sync failed"; }
    log "db sync ($DB) in $(since "$t0") s"
    t0=$(now)
    BERTH_KEYSTONE_URL=$KEYSTONE_URL "$V/python" "$HERE/glance_keystone_setup.py" \
        "$DBNAME" "$SERVICE_PASSWORD" "$URL" >"$BASE/logs/keystone-setup.out" 2>&1 \
        || { tail -n 20 "$BASE/logs/keystone-setup.out" >&2; die "registering Glance in Keystone failed"; }
    log "user $DBNAME and the image service registered in Keystone in $(since "$t0") s"
}

start() {
    if api_up; then log "glance: already up at $URL"; return 0; fi
    install
    setup
    local t0 pid; t0=$(now)
    pid=$(cat "$BASE/api.pid" 2>/dev/null || true)
    if ! pid_is "$pid" "$APP"; then
        rm -f "$BASE/api.pid"
        OS_GLANCE_CONFIG_DIR="$BASE/etc" setsid nohup "$V/gunicorn" --no-control-socket \
            -b "127.0.0.1:$PORT" -w 1 --threads 8 --timeout 600 --pid "$BASE/api.pid" \
            "$APP:application" >"$BASE/logs/api.stdout" 2>&1 </dev/null &
    fi
    local i
    for i in $(seq 1 240); do api_up && break; sleep 0.25; done
    api_up || { tail -n 30 "$BASE/logs/api.stdout" >&2; die "glance-api did not answer within 60 s (logs in $BASE/logs)"; }
    log "glance-api up in $(since "$t0") s at $URL"
}

stop() {
    if stop_pidfiles --match "$APP" "$BASE/api.pid"; then log "glance: stopped"
    else log "glance: not started by this script"; fi
    # A Glance this script did not start still answers: its database and files stay.
    if api_up; then log "glance: another glance-api answers at $URL; its state is left"; return 0; fi
    [ -f "$BASE/etc/glance-api.conf" ] && drop_database
    rm -rf "$BASE/etc" "$BASE/images" "$BASE/staging" "$BASE/tasks" "$BASE/lock"
}

status() { api_up && echo "glance: up at $URL" || echo "glance: down"; }

print_env() {
    cat <<ENV
BERTH_GLANCE_URL=$URL
BERTH_GLANCE_AUTH_URL=$KEYSTONE_URL
BERTH_GLANCE_USER=admin
BERTH_GLANCE_PASSWORD=admin
BERTH_GLANCE_PROJECT=admin
ENV
}

ci_main 18 "${1:-}"
