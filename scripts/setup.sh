#!/usr/bin/env bash
# Installs what is missing and builds what changed; safe to run again and again.
#   scripts/setup.sh          toolchain + npm deps + both bindings + TypeScript
#   scripts/setup.sh --test   the same, plus what tests and benchmarks need (Chromium, ripgrep)
# Nothing is downloaded except from Debian, crates.io and the npm registry (DESIGN §8).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WANT_TEST_DEPS=0
[[ "${1:-}" == "--test" ]] && WANT_TEST_DEPS=1

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

apt_install() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  log "apt-get install ${missing[*]}"
  if [[ ! -f /tmp/.engram-apt-updated ]]; then
    $sudo apt-get update -qq && touch /tmp/.engram-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

cargo_install() { # crate version
  log "cargo install $1 $2"
  cargo install --locked "$1" --version "=$2" 2>/dev/null || cargo install "$1" --version "=$2"
}

# --- Rust: rustup's stable toolchain builds the native addon -------------------------------
command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (https://rustup.rs) first"

# --- wasm32: rustup's target when it can be had, else Debian's rustc-web with -Zbuild-std ----
# ENGRAM_WASM_MODE=build-std forces the Debian path (to test it where rustup's target exists).
WASM_MODE=${ENGRAM_WASM_MODE:-rustup}
if [[ $WASM_MODE == build-std ]]; then
  apt_install rustc-web cargo-web rust-web-src lld-22
elif ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  if ! rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
    WASM_MODE=build-std
    apt_install rustc-web cargo-web rust-web-src lld-22
  fi
fi

# --- wasm-bindgen-cli at exactly the version in Cargo.lock, and wasm-pack -------------------
[[ -f Cargo.lock ]] || cargo generate-lockfile
WBG_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
[[ -n "$WBG_VERSION" ]] || die "wasm-bindgen not found in Cargo.lock"
if [[ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WBG_VERSION" ]]; then
  cargo_install wasm-bindgen-cli "$WBG_VERSION"
fi
command -v wasm-pack >/dev/null || { log "cargo install wasm-pack"; cargo install --locked wasm-pack; }

# --- npm dependencies ----------------------------------------------------------------------
# better-sqlite3 (@engram/sqlite) compiles from source here (its prebuilt download is refused):
# it needs python3, make and g++, and node-gyp must use the local Node headers (/usr/include/node)
# instead of downloading them.
apt_install python3 make g++
[[ -f /usr/include/node/node.h ]] && export npm_config_nodedir=/usr
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json \
      || package.json -nt node_modules/.package-lock.json ]]; then
  log "npm install"
  # `npm install` honours package-lock.json and keeps what is already in node_modules.
  npm install --no-audit --no-fund --loglevel=error
  touch node_modules/.package-lock.json
fi

# An install that skipped or lost the addon (a failed build, a Node upgrade) is rebuilt.
if [[ -d node_modules/better-sqlite3 ]] && ! node -e "require('better-sqlite3')" >/dev/null 2>&1; then
  log "npm rebuild better-sqlite3 (from source)"
  npm rebuild better-sqlite3 --loglevel=error >/dev/null
  node -e "require('better-sqlite3')" || die "better-sqlite3 does not load after a rebuild"
fi

if [[ $WANT_TEST_DEPS -eq 1 ]]; then
  [[ -x /usr/bin/chromium && -x /usr/bin/rg ]] || apt_install chromium ripgrep
fi

# --- local model for the llama test (--test): node-llama-cpp's CPU runtime in a cache prefix,
# outside the workspace lockfile (it is an optional peer of engram), and the GGUF models: SmolLM2
# (llama adapter and agent-turn tests) and Qwen2.5-Coder-1.5B (long-term memory test, ~1.1 GB) ---
# Only node-llama-cpp and its linux-x64 prebuilt binary (~85 MB; its other optional platform
# binaries would be ~725 MB). Tests find it through ENGRAM_LLAMA_MODULE or this path.
LLAMA_VERSION=3.22.1
LLAMA_PREFIX=.cache/llama
if [[ $WANT_TEST_DEPS -eq 1 ]]; then
  if [[ "$(node -p "require('./$LLAMA_PREFIX/node_modules/node-llama-cpp/package.json').version" 2>/dev/null)" != "$LLAMA_VERSION" \
        || ! -d $LLAMA_PREFIX/node_modules/@node-llama-cpp/linux-x64 ]]; then
    log "npm install node-llama-cpp@$LLAMA_VERSION into $LLAMA_PREFIX"
    mkdir -p "$LLAMA_PREFIX"
    NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --prefix "$LLAMA_PREFIX" --no-save --no-audit --no-fund --loglevel=error \
      --omit=optional "node-llama-cpp@$LLAMA_VERSION" "@node-llama-cpp/linux-x64@$LLAMA_VERSION" >/dev/null
  fi
  bash scripts/fetch-model.sh >/dev/null
  bash scripts/fetch-model.sh qwen-1.5b >/dev/null
fi

# --- PostgreSQL for the store tests (--test): Debian's cluster on 127.0.0.1, role/db engram ----
# Tests connect with ENGRAM_PG_URL, default postgres://engram:engram@127.0.0.1:5432/engram.
start_postgres() {
  apt_install postgresql
  local ver
  ver=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)
  [[ -n "$ver" ]] || die "postgresql is installed but /usr/lib/postgresql is empty"
  if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -qx "$ver main"; then
    LC_ALL=C.UTF-8 pg_createcluster "$ver" main >/dev/null
  fi
  if ! pg_ctlcluster "$ver" main status >/dev/null 2>&1; then
    log "starting PostgreSQL $ver/main"
    LC_ALL=C.UTF-8 pg_ctlcluster "$ver" main start
  fi
  local psql=(runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qAtX)
  [[ $(id -u) -ne 0 ]] && psql=(sudo -u postgres psql -v ON_ERROR_STOP=1 -qAtX)
  local i
  for i in $(seq 1 30); do "${psql[@]}" -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
  if [[ $("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'engram'") != 1 ]]; then
    "${psql[@]}" -c "CREATE ROLE engram LOGIN PASSWORD 'engram'"
  fi
  if [[ $("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'engram'") != 1 ]]; then
    "${psql[@]}" -c "CREATE DATABASE engram OWNER engram"
  fi
}
if [[ $WANT_TEST_DEPS -eq 1 && -z "${ENGRAM_PG_URL:-}" ]]; then
  if [[ $(id -u) -eq 0 ]] || sudo -n true 2>/dev/null; then
    start_postgres
  else
    log "not root: skipping the PostgreSQL install/start (set ENGRAM_PG_URL to a server)"
  fi
fi

# --- native addon (napi-rs); cargo makes it incremental ------------------------------------
log "building @engram/native"
# A failed build must stop here: `( … ) && rm` would let `set -e` pass over it, and the tests
# would then run the previous addon.
if ! (cd bindings/node && "$ROOT/node_modules/.bin/napi" build --platform --release >/dev/null 2>.tmp-napi.log); then
  cat bindings/node/.tmp-napi.log >&2
  die "the native addon did not build"
fi
rm -f bindings/node/.tmp-napi.log
# napi-rs layout: the binary also goes into its per-platform package (npm/<platform>/), which is
# what gets published as @engram/native-<platform> (gitignored: *.node).
for node_file in bindings/node/engram.*.node; do
  platform=${node_file#bindings/node/engram.}; platform=${platform%.node}
  if [[ -d bindings/node/npm/$platform ]]; then cp "$node_file" "bindings/node/npm/$platform/"; fi
done

# --- WebAssembly (wasm-pack, target web), then wasm-opt from npm `binaryen` -----------------
log "building @engram/wasm ($WASM_MODE)"
# Built into pkg/.next and moved into pkg/ once optimised: tests and pack-test running meanwhile
# see the previous build or the new one, never the raw module or a half-written file.
wasm_pack=(wasm-pack --quiet build bindings/wasm --mode force --no-opt --no-pack --target web
           --profile wasm-release --out-dir pkg/.next)
# No panic locations and no derived Debug output in the module: nothing in the WASM core shows
# them (no panic hook: a panic traps), and they were 32 KB of its gzip size
# (docs/decisions/2026-11-29-wasm-size-and-prompt-cache.md). Unstable flags, so the stable
# compiler takes them through RUSTC_BOOTSTRAP for this build alone; .cargo/config.toml's
# target rustflags (simd128) are repeated because this variable replaces them.
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+simd128 -Zlocation-detail=none -Zfmt-debug=shallow"
if [[ $WASM_MODE == build-std ]]; then
  RUSTC=/usr/bin/rustc CARGO_TARGET_DIR="$ROOT/target/wasm-build-std" \
    "${wasm_pack[@]}" -- -Zbuild-std=std,panic_abort
else
  "${wasm_pack[@]}"
fi
unset RUSTC_BOOTSTRAP CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS
# wasm-pack writes pkg/.gitignore with `*`, which npm honours inside `files`: the published
# tarball would be empty. The repository's own .gitignore already keeps pkg/ out of git.
rm -f bindings/wasm/pkg/.gitignore bindings/wasm/pkg/.next/.gitignore
WASM=bindings/wasm/pkg/.next/engram_wasm_bg.wasm
STAMP=target/.engram-wasm-opt.sha256
# -Os: -Oz saved ~9 KB but inlines less, and the bench found WASM calls slower.
WASM_OPT_FLAGS=(-Os --strip-debug --strip-producers)
raw_sum="$(sha256sum "$WASM" | cut -d' ' -f1) ${WASM_OPT_FLAGS[*]}"
if [[ -f $STAMP && "$(sed -n 1p "$STAMP")" == "$raw_sum" && -f "$STAMP.wasm" ]]; then
  cp "$STAMP.wasm" "$WASM"  # wasm-bindgen output and flags unchanged: reuse the optimised module
else
  log "wasm-opt"
  node_modules/.bin/wasm-opt "$WASM" "${WASM_OPT_FLAGS[@]}" -o "$WASM.opt"
  mv "$WASM.opt" "$WASM"
  mkdir -p target && echo "$raw_sum" > "$STAMP" && cp "$WASM" "$STAMP.wasm"
fi
for f in bindings/wasm/pkg/.next/*; do mv -f "$f" bindings/wasm/pkg/; done
rmdir bindings/wasm/pkg/.next

# --- TypeScript ------------------------------------------------------------------------------
log "building TypeScript"
# Incremental: files unchanged since the last run keep their diagnostics (build info in .tmp/).
mkdir -p .tmp
# One command per line: `set -e` passes over a failure inside an `&&` list.
node_modules/.bin/tsc -b
node_modules/.bin/tsc -p examples/node --incremental --tsBuildInfoFile .tmp/examples-node.tsbuildinfo
node_modules/.bin/tsc -p benches --incremental --tsBuildInfoFile .tmp/benches.tsbuildinfo
log "ready (wasm: $WASM_MODE)"
