#!/usr/bin/env bash
# README command 2: install everything the tests need on this Debian machine (Docker
# engine, a local registry, test images, chromium, RabbitMQ/PostgreSQL/MariaDB clients, and the
# OpenStack Placement, Keystone, Cinder, Neutron and Glance services for integration tests,
# berth with its test extras) and run the whole suite. Extra arguments go to pytest.
source "$(dirname "$0")/lib.sh"
need_root
# iproute2 and iptables: tests/functional/network; containernetworking-plugins: bench P8's
# reference bridge plugin and the CRI pods' network; busybox-static: the capsule sandbox
# image (berth/sandbox:1); e2fsprogs and mount: local volumes (mkfs.ext4, loop mounts);
# chromium: tests/functional/dashboard drive the web console in it with Playwright.
apt_install curl ca-certificates iproute2 iptables containernetworking-plugins busybox-static \
    e2fsprogs mount chromium
# Playwright must never download a browser: the tests use Debian's chromium.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# RabbitMQ and PostgreSQL usually run before the session (shared/infra.md): stop them at
# exit only when this script starts them (ci-services.sh itself never stops what it did not start).
STOP=(registry placement keystone containerd)
for svc in rabbitmq postgres; do
    state=$(bash "$ROOT/.ci/ci-services.sh" status "$svc" 2>/dev/null || true)
    [[ $state == *": up"* ]] || STOP+=("$svc")
done
STOP+=(cinder)   # stop runs the list backwards: Cinder first, while its database and vhost are there
# Neutron first: its database and vhost go while MariaDB and RabbitMQ are still there.
# Only a Neutron this run started: stopping drops its database, vhost and br-int, which
# another run on the machine may be using.
NEUTRON_STARTED=0
GLANCE_STARTED=0
VENV_PID=""
trap '[ -n "$VENV_PID" ] && kill "$VENV_PID" 2>/dev/null
      [ "$NEUTRON_STARTED" = 1 ] && { bash "$ROOT/.ci/neutron-ci.sh" stop >/dev/null 2>&1 || true; }
      [ "$GLANCE_STARTED" = 1 ] && { bash "$ROOT/.ci/ci-services.sh" stop glance >/dev/null 2>&1 || true; }
      bash "$ROOT/.ci/ci-services.sh" stop "${STOP[@]}" >/dev/null 2>&1 || true' EXIT
# berth's venv installs while the services start: neither needs the other, and each
# waits on the network and the disk as much as on the CPU. The installer's output is
# shown once it is done (or failed).
ensure_python
VENV_LOG=$(mktemp)
( ensure_venv test ) >"$VENV_LOG" 2>&1 &
VENV_PID=$!
# Neutron's and Glance's installs (apt packages and venvs: on a new machine about 2.5 min
# and 1-2 min, most of it pip) need none of the services either: they run beside them
# too, and their starts below find them done. Only when that service is down: an
# install never touches a running one's venv, but there is nothing to gain then.
INSTALL_PIDS=()
export BERTH_NEUTRON_TESTS=${BERTH_NEUTRON_TESTS:-1} BERTH_GLANCE_TESTS=${BERTH_GLANCE_TESTS:-1}
if [ "$BERTH_NEUTRON_TESTS" != 0 ] \
        && [[ $(bash "$ROOT/.ci/neutron-ci.sh" status 2>/dev/null || true) == *": down"* ]]; then
    bash "$ROOT/.ci/neutron-ci.sh" install & INSTALL_PIDS+=($!)
fi
if [ "$BERTH_GLANCE_TESTS" != 0 ] \
        && [[ $(bash "$ROOT/.ci/glance-ci.sh" status 2>/dev/null || true) != *": up"* ]]; then
    bash "$ROOT/.ci/glance-ci.sh" install & INSTALL_PIDS+=($!)
fi
# containerd (capsule_driver = cri) after docker: its images are imported from there.
bash "$ROOT/.ci/ci-services.sh" start docker registry rabbitmq postgres placement keystone cinder \
    containerd
# Glance's and Neutron's starts install first (a failed install is tried again there,
# and says why): the installs begun above end before them.
for pid in "${INSTALL_PIDS[@]}"; do wait "$pid" || true; done
# Glance (tests/integration/image): behind the Keystone above, started in the background
# (20-60 s here, most of it its db sync and Keystone calls) while Neutron, the images and
# the venv are made; joined before the tests. BERTH_GLANCE_TESTS=0: not started, and
# those tests skip. Otherwise they fail (never skip) when Glance is not up.
GLANCE_PID=
if [ "$BERTH_GLANCE_TESTS" != 0 ]; then
    if [[ $(bash "$ROOT/.ci/ci-services.sh" status glance 2>/dev/null || true) != *": up"* ]]; then
        GLANCE_STARTED=1
    fi
    bash "$ROOT/.ci/ci-services.sh" start glance &
    GLANCE_PID=$!
fi
# Neutron (tests/integration/network): its own script, like Cinder's; needs RabbitMQ
# (started above) and MariaDB. BERTH_NEUTRON_TESTS: 1 (the default) runs them all,
# short only those marked neutron_short (docs/testing.md), 0 none (Neutron not started).
if [ "$BERTH_NEUTRON_TESTS" != 0 ]; then
    # "starting" (its processes run, not answering yet) is not ours to stop at exit
    if [[ $(bash "$ROOT/.ci/neutron-ci.sh" status 2>/dev/null || true) == *": down"* ]]; then
        NEUTRON_STARTED=1
    fi
    bash "$ROOT/.ci/neutron-ci.sh" start
fi
bash "$ROOT/.ci/make-test-images.sh" --push 127.0.0.1:5000 busybox
if ! wait "$VENV_PID"; then
    cat "$VENV_LOG" >&2; rm -f "$VENV_LOG"
    say "installing berth[test] into $VENV failed (its output above)"; exit 1
fi
VENV_PID=""
cat "$VENV_LOG" >&2; rm -f "$VENV_LOG"
if [ -n "$GLANCE_PID" ]; then wait "$GLANCE_PID" || say "Glance did not start: tests/integration/image will fail"; fi
cd "$ROOT"
set +e
# Two steps (tests/conftest.py says which test is in which part): first the parallel
# part in two pytest-xdist workers (unit and functional tests, and the docs, integration
# and reliability directories checked to run beside them), then the serial part in one
# process (the tests that take a shared service away, and any directory not yet
# checked). BERTH_TEST_WORKERS=0 runs everything in one process, and so do arguments
# that select tests (paths, -k).
PYTEST=("$VENV/bin/python" -m pytest -q -p no:cacheprovider)
workers=${BERTH_TEST_WORKERS:-2}
selects=0
for arg in "$@"; do [[ $arg == -* ]] || selects=1; done
if [ "$selects" = 1 ] || [ "$workers" = 0 ]; then
    "${PYTEST[@]}" "$@"
    rc=$?
else
    "${PYTEST[@]}" -n "$workers" --part=parallel "$@"
    rc=$?
    "${PYTEST[@]}" --part=serial "$@"
    second=$?
    # A serial part with nothing in it is fine; either step's failure fails the run,
    # and so does a parallel part that collected nothing.
    if [ "$second" = 5 ]; then second=0; fi
    if [ "$rc" = 0 ]; then rc=$second; fi
fi
set -e
if [ "$rc" = 5 ]; then say "pytest collected no tests"; exit 1; fi
exit "$rc"
