#!/usr/bin/env bash
# README command 1: install what berth needs on this Debian machine and run
# `berth serve` on the embedded default (SQLite, in-process RPC, local Docker).
# Extra arguments go to `berth serve` (e.g. --config-file /etc/berth/berth.conf).
source "$(dirname "$0")/lib.sh"
need_root
# busybox-static: the agent makes the capsule sandbox image (berth/sandbox:1) from it;
# e2fsprogs and mount: local volumes (mkfs.ext4, loop mounts).
apt_install curl ca-certificates busybox-static e2fsprogs mount
ensure_docker
# The README's tour runs local/busybox: build it offline (1 s) when it is missing.
if ! docker image inspect local/busybox:latest >/dev/null 2>&1; then
    BERTH_TEST_IMAGE_PREFIX=local bash "$ROOT/.ci/make-test-images.sh" busybox
fi
ensure_venv
say "starting berth serve (API on http://127.0.0.1:9517/v1; Ctrl-C stops it)"
exec "$VENV/bin/berth" serve "$@"
