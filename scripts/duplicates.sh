#!/usr/bin/env bash
# Gate: no repeated code outside the documented exceptions in .duplicates-allow.
# Uses the workplace's `duplicates` command (not an npm or Debian package); where it is not on
# PATH the gate says so and passes. Rows marked `boilerplate` (thin, same-shape lines such as
# test set-up) are reported but do not fail; any other row must match an allow-list line.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v duplicates >/dev/null 2>&1; then
  echo "duplicates: command not available here; gate skipped"
  exit 0
fi
out=$(duplicates --most 200 --seconds 120)
allow=$(grep -v '^\s*\(#\|$\)' .duplicates-allow | awk '{print $1" "$2}' || true)
bad=()
while IFS= read -r row; do
  [[ $row =~ ^D[0-9]+\  ]] || continue
  [[ $row == *boilerplate* ]] && continue
  a=$(awk '{print $2}' <<<"$row" | cut -d: -f1)
  b=$(awk '{print $4}' <<<"$row" | cut -d: -f1)
  if ! grep -qxF "$a $b" <<<"$allow" && ! grep -qxF "$b $a" <<<"$allow"; then bad+=("$row"); fi
done <<<"$out"
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "duplicates: repeated code (make it one piece, or document the exception in .duplicates-allow):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "duplicates: clean ($(head -1 <<<"$out"))"
