#!/usr/bin/env bash
# Every test: the hygiene gates first (fast, so a red run says why in seconds), then Rust
# unit/property tests, the TypeScript suites (the library's on both cores, the command's once: see
# docs/decisions/2026-11-29-test-suite-time.md), workerd and Chromium, the benchmark
# harness on a tiny corpus, and a warning-free typedoc build.
# Run through `npm test`, which first runs scripts/setup.sh --test.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
bin=node_modules/.bin
run_start=$SECONDS
phase_start=$SECONDS
durations=()
phase() { # name: ends the previous phase with its duration, starts the next
  if [[ -n ${phase_name:-} ]]; then
    echo "   (${phase_name%%:*}: $((SECONDS - phase_start)) s)"
    durations+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "${phase_name%%:*}")")
  fi
  phase_name=$1 phase_start=$SECONDS
  echo "== $1"
}

# Phases that do not depend on each other and are mostly one process at a time (one core, or
# waiting on npm, a browser or a child): run side by side, each into its own log, printed whole
# when all have ended. Every one runs to its end; the run fails if any failed.
together() { # "name|command" ...
  local jobs=() names=() logs=() failed=()
  for spec in "$@"; do
    local name=${spec%%|*} log=".tmp/phase-${#names[@]}.log"
    names+=("$name") logs+=("$log")
    (
      start=$SECONDS rc=0
      bash -c "${spec#*|}" >"$log" 2>&1 || rc=$?
      echo $((SECONDS - start)) >"$log.seconds"
      exit $rc
    ) &
    jobs+=($!)
  done
  for i in "${!jobs[@]}"; do
    local rc=0
    wait "${jobs[$i]}" || rc=$?
    echo "-- ${names[$i]} ($(cat "${logs[$i]}.seconds") s, exit $rc)"
    cat "${logs[$i]}"
    ((rc == 0)) || failed+=("${names[$i]}")
  done
  if ((${#failed[@]} > 0)); then
    echo "FAILED: ${failed[*]}"
    return 1
  fi
}

# The ten slowest test files, printed at the end of every run that got through vitest, red or
# green (.tmp/vitest.json is written by this run's vitest; a stale one is never read).
slowest() {
  [[ -f .tmp/vitest.json && .tmp/vitest.json -nt .tmp/test-run-started ]] || return 0
  node -e '
    const r = JSON.parse(require("fs").readFileSync(".tmp/vitest.json", "utf8"));
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
    const byFile = new Map();
    for (const f of r.testResults) {
      const name = require("path").relative(process.cwd(), f.name);
      byFile.set(name, (byFile.get(name) ?? 0) + (f.endTime - f.startTime));
    }
    console.log("the ten slowest test files (seconds, summed over the projects that run them):");
    for (const [name, ms] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 10))
      console.log(`  ${(ms / 1000).toFixed(1).padStart(7)}  ${name}`);
  ' || true
}
summary() {
  local rc=$?
  [[ -n ${phase_name:-} ]] && durations+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "${phase_name%%:*}")")
  echo "== summary ($( ((rc == 0)) && echo passed || echo "FAILED in ${phase_name%%:*}"))"
  slowest
  echo "phases:"
  printf '  %s\n' "${durations[@]}"
  printf '  %5d s  total\n' $((SECONDS - run_start))
}
touch .tmp/test-run-started
trap summary EXIT

# Rust tests in one profile of their own, `checked`: optimised (opt-level 1), with debug assertions
# and overflow checks kept, so a property test checks exactly what it checks in a debug build, in
# a fraction of the time (the fuzz pass ~10x faster). Its own directory, target/checked, leaves
# the debug build other commands use alone.
export CARGO_PROFILE_CHECKED_INHERITS=dev CARGO_PROFILE_CHECKED_OPT_LEVEL=1 CARGO_PROFILE_CHECKED_DEBUG=0

phase "gates: cargo fmt, clippy (native and wasm32), biome, tsc (sources and tests), import cycles, duplicates (side by side)"
# The WebAssembly build compiles code the native one does not (cfg(target_arch = "wasm32")).
together \
  "rust: cargo fmt, clippy (native, wasm32)|cargo fmt --all --check && cargo clippy --workspace --all-targets --quiet -- -D warnings && cargo clippy -p engram-core -p engram-wasm --target wasm32-unknown-unknown --quiet -- -D warnings" \
  "tsc (sources and tests)|$bin/tsc -p tsconfig.check.json --incremental --tsBuildInfoFile .tmp/check.tsbuildinfo" \
  "biome, import cycles, duplicates|$bin/biome ci --colors=off . && $bin/madge --circular --extensions ts --ts-config tsconfig.check.json packages/*/src benches/src && node scripts/module-cycles.mjs && node scripts/duplicates.mjs"

phase "cargo test"
cargo test --workspace --exclude engram-node --exclude engram-wasm --profile checked --quiet

phase "fuzz: core property tests at scale (paths, glob, edit, regex, grep ceiling, redactor; 2,000 cases each)"
PROPTEST_CASES="${ENGRAM_FUZZ_CASES:-2000}" cargo test -p engram-core --test fuzz --profile checked --quiet

phase "vitest (native, wasm, cli, edge)"
"$bin/vitest" run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json

phase "benchmark harness, packaging, docs, typedoc (side by side)"
together \
  "benchmark harness (tiny corpus: proves it runs and verifies; times mean nothing here)|$bin/tsx benches/src/run.ts --size tiny --out .tmp/bench --no-docs" \
  "packaging: tarballs installed outside the workspace; examples on Node (native, WASM), workerd, Deno, Chromium|bash scripts/pack-test.sh" \
  "docs (relative links resolve inside the repository, every \`\`\`ts sample in docs/ compiles), then typedoc|node scripts/check-docs.mjs && $bin/typedoc --options docs/typedoc.json --treatWarningsAsErrors --logLevel Warn"
