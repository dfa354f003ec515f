# shellcheck shell=bash
# Helpers of .ci's service scripts (cinder-ci.sh, glance-ci.sh, kuryr-ci.sh, neutron-ci.sh,
# zun-ci.sh). A script sets CI_TAG (its log prefix) and sources this file; the database
# helpers read DB (pgsql or mysql) and DBNAME, the database, its user and its password.

log() { printf '[%s] %s\n' "$CI_TAG" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
# a live process (a killed one stays a zombie for a few seconds here, as PID 1 reaps
# lazily: it counts as dead), and one whose command line holds a text
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
pid_is() { pid_alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"; }

# stop_pidfiles [--match TEXT] FILE...: the process each pid file names (its process group
# when it leads one: the scripts start their services with setsid), and only when its
# command line holds TEXT: TERM, up to 10 s to go, then KILL. The files are removed.
# Succeeds when it stopped anything.
stop_pidfiles() {
    local match="" f pid pids=""
    if [ "${1:-}" = --match ]; then match=$2; shift 2; fi
    for f in "$@"; do
        pid=$(cat "$f" 2>/dev/null || true)
        if pid_alive "$pid" && { [ -z "$match" ] || pid_is "$pid" "$match"; }; then
            kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
            pids="$pids $pid"
        fi
        rm -f "$f"
    done
    for pid in $pids; do
        for _ in $(seq 1 50); do pid_alive "$pid" || break; sleep 0.2; done
        pid_alive "$pid" && { kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; }
    done
    [ -n "$pids" ]
}

# apt_install LOG PKG...: the Debian packages that are not installed yet (no recommends, no
# service start), with an apt-get update when the first try fails; apt's output in LOG
apt_install() {
    local log_file=$1 missing=() p t0; shift
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    t0=$(now); mkdir -p "$(dirname "$log_file")"
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # the test command installs Neutron's packages while ci-services.sh installs others:
    # the second apt-get waits for dpkg's lock instead of failing
    local apt=(apt-get -o DPkg::Lock::Timeout=600)
    "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" >>"$log_file" 2>&1 || {
        "${apt[@]}" update -q >>"$log_file" 2>&1
        "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" >>"$log_file" 2>&1
    } || { tail -n 30 "$log_file" >&2; die "apt-get install ${missing[*]} failed"; }
    log "installed ${missing[*]} in $(since "$t0") s"
}

db_url() {
    if [ "$DB" = pgsql ]; then echo "postgresql+psycopg2://$DBNAME:$DBNAME@127.0.0.1:5432/$DBNAME"
    else echo "mysql+pymysql://$DBNAME:$DBNAME@127.0.0.1:3306/$DBNAME"; fi
}

setup_database() {   # the database and its owner, when missing
    if [ "$DB" = pgsql ]; then
        su postgres -c "psql -q -v ON_ERROR_STOP=1" >/dev/null <<SQL
DO \$\$BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DBNAME') THEN CREATE ROLE $DBNAME; END IF;
END\$\$;
ALTER ROLE $DBNAME WITH LOGIN PASSWORD '$DBNAME';
SELECT 'CREATE DATABASE $DBNAME OWNER $DBNAME' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DBNAME')\gexec
SQL
    else
        mysql -h127.0.0.1 -uroot -e "CREATE DATABASE IF NOT EXISTS $DBNAME CHARACTER SET utf8mb4;
            CREATE USER IF NOT EXISTS '$DBNAME'@'127.0.0.1' IDENTIFIED BY '$DBNAME';
            GRANT ALL ON $DBNAME.* TO '$DBNAME'@'127.0.0.1';"
    fi
}

drop_database() {
    if [ "$DB" = pgsql ]; then
        su postgres -c "psql -q -c 'DROP DATABASE IF EXISTS $DBNAME WITH (FORCE)'" >/dev/null 2>&1 || true
    else
        mysql -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $DBNAME; DROP USER IF EXISTS '$DBNAME'@'127.0.0.1';" 2>/dev/null || true
    fi
}

# ci_main USAGE_END ACTION: run install, start, stop, status or env (print_env) as root;
# anything else prints the script's header (its lines 2 to USAGE_END)
ci_main() {
    [ "$(id -u)" = 0 ] || die "run as root"
    case "${2:-}" in
        install) install ;;
        start) start ;;
        stop) stop ;;
        status) status ;;
        env) print_env ;;
        *) sed -n "2,${1}p" "$0"; exit 2 ;;
    esac
}
