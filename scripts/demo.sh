#!/usr/bin/env bash
# The main job on the embedded default: a store in a temp folder, files put, records appended,
# one byte tampered with, and `reviewtrail verify` catching it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$here/.venv/bin:$PATH"
work=$(mktemp -d -t reviewtrail-demo-XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export REVIEWTRAIL_STORE="$work/store"
cd "$work"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "reviewtrail init"
reviewtrail init

step "put two files into the CAS"
printf 'model,score\ngpt-x,0.81\nclaude-y,0.84\n' > results.csv
printf 'The candidate answer cites [paper:42] correctly.\n' > review.md
csv=$(reviewtrail cas put results.csv --media-type text/csv --json)
md=$(reviewtrail cas put review.md --pool agent-state --media-type text/markdown --json)
echo "$csv"
echo "$md"

step "append records that point at them"
reviewtrail ledger append --type demo.eval-result@1 --actor demo-runner --privacy private \
  --subject eval:run-1 --payload "{\"results\": $csv}"
reviewtrail ledger append --type demo.review@1 --actor demo-reviewer --privacy private \
  --subject eval:run-1 --payload "{\"review\": $md, \"verdict\": \"accept\"}"
reviewtrail ledger tail

step "verify: everything intact"
reviewtrail verify

step "tamper with one byte of a stored object"
hex=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"].split(":")[1])' "$csv")
blob="$REVIEWTRAIL_STORE/versioning/data/blobs/sha256/$hex"
chmod u+w "$blob"
python3 - "$blob" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read()); b[0] ^= 0x01
open(p, "wb").write(bytes(b))
PY

step "verify again: the damage is reported (exit code 4)"
set +e
reviewtrail verify
rc=$?
set -e
echo "exit code: $rc"
if [ "$rc" -ne 4 ]; then
  echo "demo failed: verify did not report the tampered object" >&2
  exit 1
fi
echo
echo "demo complete: tampering was detected."
