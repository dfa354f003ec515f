#!/usr/bin/env bash
# Build the web console from dashboard/ (exactly the versions in package-lock.json) into
# berth/dashboard/static, the bundle the Python package ships; commit the result.
# Needs Node.js 20.19+ and npm (only to build: berth itself never runs Node.js).
# BERTH_DASHBOARD_OUT=DIR builds elsewhere (tests/functional/dashboard/test_dashboard_bundle.py).
set -euo pipefail
cd "$(dirname "$0")/../dashboard"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
