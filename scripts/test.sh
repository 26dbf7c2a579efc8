#!/usr/bin/env bash
# Every test: Rust unit/property tests, the core suite on both cores, workerd and Chromium, the
# benchmark harness on a tiny corpus, and a warning-free typedoc build.
# Run through `npm test`, which first runs scripts/setup.sh --test.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp

echo "== cargo test"
cargo test --workspace --exclude engram-node --exclude engram-wasm --quiet

echo "== vitest (native, wasm, edge)"
node_modules/.bin/vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json

echo "== benchmark harness (tiny corpus: proves it runs and verifies; times mean nothing here)"
node_modules/.bin/tsx benches/src/run.ts --size tiny --out .tmp/bench --no-docs

echo "== typedoc"
node_modules/.bin/typedoc --options docs/typedoc.json --treatWarningsAsErrors --logLevel Warn

node -e '
  const r = JSON.parse(require("fs").readFileSync(".tmp/vitest.json", "utf8"));
  console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
'
