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
phase_start=$SECONDS
phase() { # name: ends the previous phase with its duration, starts the next
  [[ -n ${phase_name:-} ]] && echo "   (${phase_name%%:*}: $((SECONDS - phase_start)) s)"
  phase_name=$1 phase_start=$SECONDS
  echo "== $1"
}

phase "gates: cargo fmt, clippy (native and wasm32), biome, tsc (sources and tests), import cycles, duplicates"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The WebAssembly build compiles code the native one does not (cfg(target_arch = "wasm32")).
cargo clippy -p engram-core -p engram-wasm --target wasm32-unknown-unknown --quiet -- -D warnings
"$bin/biome" ci --colors=off .
"$bin/tsc" -p tsconfig.check.json
"$bin/madge" --circular --extensions ts --ts-config tsconfig.check.json packages/*/src benches/src
node scripts/module-cycles.mjs
node scripts/duplicates.mjs

phase "cargo test"
cargo test --workspace --exclude engram-node --exclude engram-wasm --quiet

phase "fuzz: core property tests at scale (paths, glob, edit, regex, grep ceiling, redactor; ~60 s)"
PROPTEST_CASES="${ENGRAM_FUZZ_CASES:-2000}" cargo test -p engram-core --test fuzz --quiet

phase "vitest (native, wasm, cli, edge)"
"$bin/vitest" run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json

phase "benchmark harness (tiny corpus: proves it runs and verifies; times mean nothing here)"
"$bin/tsx" benches/src/run.ts --size tiny --out .tmp/bench --no-docs

phase "packaging: tarballs installed outside the workspace; examples on Node (native, WASM), workerd, Deno, Chromium"
bash scripts/pack-test.sh

phase "docs: relative links resolve inside the repository, every \`\`\`ts sample in docs/ compiles"
node scripts/check-docs.mjs

phase "typedoc"
"$bin/typedoc" --options docs/typedoc.json --treatWarningsAsErrors --logLevel Warn

phase "summary"
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
'
