# Shared by scripts/serve.sh and scripts/test.sh: install what berth needs on a Debian
# machine (as root), start the Docker engine when none answers, and build the venv.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${BERTH_VENV:-$ROOT/.venv}
export DEBIAN_FRONTEND=noninteractive

say() { printf '[berth] %s\n' "$*" >&2; }

need_root() {
    [ "$(id -u)" = 0 ] || { say "run this as root (sudo $0): it installs packages and starts dockerd"; exit 1; }
}

apt_updated=0
apt_install() {   # apt_install PKG... : only the missing ones, without recommends
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$apt_updated" = 0 ]; then apt-get update -q >/dev/null; apt_updated=1; fi
    say "installing ${missing[*]}"
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_docker() {
    if ! curl -fsS -m 3 --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1; then
        apt_install curl ca-certificates
        bash "$ROOT/.ci/ci-services.sh" start docker
    fi
}

ensure_python() {
    if ! python3 -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 11)' 2>/dev/null; then
        apt_install python3 python3-venv
    fi
}

ensure_venv() {   # ensure_venv EXTRAS : a venv with berth (and EXTRAS) installed from this tree
    local extras=${1:-}
    ensure_python
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
    say "installing berth${extras:+[$extras]} into $VENV"
    "$VENV/bin/python" -m pip install -q -e "$ROOT${extras:+[$extras]}"
}
