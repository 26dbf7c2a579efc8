#!/usr/bin/env bash
# The packaging test (a step of scripts/test.sh): packs every publishable package, installs the
# tarballs into a fresh project outside the workspace and runs the examples on Node (native and
# WASM), workerd, Deno and headless Chromium. Needs scripts/setup.sh --test to have run (builds,
# Chromium, PostgreSQL). Caches under .cache/pack-test. See scripts/pack-test/run.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node scripts/pack-test/run.mjs "$@"
