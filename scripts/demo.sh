#!/usr/bin/env bash
# The main job on the embedded default: a store in a temp folder, files put, records appended,
# one byte tampered with, and `reviewtrail verify` catching it. `make demo-scale` runs the same
# script with the ledger in PostgreSQL and the objects in an S3 bucket (scripts/with_servers.py).
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

step "trace three rounds of an LLM review through the save_trace.sh drop-in"
git init -q "$work"   # the project root is the git top level
reviewtrail trace install-helper --project-dir "$work"
helper=$(reviewtrail trace resolve-helper --project-dir "$work")
round() {  # round N SCORE VERDICT TEXT [flags...]
  local n=$1 score=$2 verdict=$3 text=$4; shift 4
  printf 'Review the method section of the paper (round %s).\n' "$n" > "prompt-$n.txt"
  printf 'Score: %s/10\n\n%s\n\nVerdict: %s\n' "$score" "$text" "$verdict" > "response-$n.md"
  bash "$helper" --skill auto-review-loop --purpose "round-$n-review" --backend claude \
    --tool mcp__claude__review --executor codex --executor-model gpt-5 \
    --requested-reviewer-model claude-opus-4 --reported-reviewer-model claude-opus-4-1 \
    --thread-id demo-thread --prompt-file "prompt-$n.txt" --response-file "response-$n.md" \
    --status ok --verdict "$verdict" --review-completed --review-scope-complete "$@" >/dev/null
}
round 1 5 "not ready" "The ablation study is missing; the main claim cannot be assessed."
round 2 7 almost "The ablation was added. However, the baseline numbers still need a citation."
round 3 8 ready "All concerns are addressed." --review-positive
reviewtrail trace ls --project-dir "$work"
run=$(reviewtrail trace ls --project-dir "$work" --json | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["skill"] + "/" + r["run_id"])')
reviewtrail trace divergence "$run" --project-dir "$work"
reviewtrail trace verify "$work"

step "sandboxed runs in a session: write a file, declare it, change it, declare it again"
# Memory and process limits are held by a control group per run; where none can be made (no cgroup
# v1 hierarchy, not root), a run is refused (exit 5) unless --weak-limits accepts the in-sandbox
# mechanisms: the demo says so and accepts them.
weak=()
if ! why=$(python3 -c 'import sys; from reviewtrail.provenance.sandbox._cgroup import cgroup_support as s; w = s(); print(w or ""); sys.exit(1 if w else 0)'); then
  echo "note: no control group can be made here ($why); the demo runs with --weak-limits"
  weak=(--weak-limits)
fi
session=$(reviewtrail session new --project demo)
run1=$(reviewtrail run "${weak[@]}" --session "$session" --lang python --env SEED=7 --json \
  -c "open('summary.md','w').write('# Results\n\n- model A: 0.81\n')" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["recordId"])')
echo "run $run1 wrote summary.md"
reviewtrail artifact declare summary.md --session "$session" --path summary.md --actor demo-agent
reviewtrail run "${weak[@]}" --session "$session" --lang bash \
  -c "printf -- '- model B: 0.84 [run:$run1]\n\nPrior work reported 0.79 [1].\n' >> summary.md"
reviewtrail artifact declare summary.md --session "$session" --path summary.md --actor demo-agent
reviewtrail artifact diff summary.md@1 summary.md@2 --project demo

step "lineage of summary.md@2 (runs, cwd, environment, session)"
reviewtrail provenance summary.md@2 --project demo

step "claims in an assistant reply, evidence linked to the run and the artifact"
printf 'Model A scores 0.81 on the benchmark [run:%s]. The table is in [artifact:summary.md@2].\n' "$run1" > reply.md
reviewtrail claims extract reply.md --turn demo-turn-1
claim=$(reviewtrail claims ls --turn demo-turn-1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["claimId"])')
ev_run=$(reviewtrail evidence add --run "$run1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["evidenceId"])')
ev_art=$(reviewtrail evidence add --artifact summary.md@2 --project demo --json \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["evidenceId"])')
reviewtrail evidence link "$claim" "$ev_run" --relation supports
reviewtrail evidence link "$claim" "$ev_art" --relation context
reviewtrail evidence ls --claim "$claim"

step "a Quick review of summary.md@2 by the Reviewer Specialist"
REVIEWTRAIL_REVIEWER=quick reviewtrail review run summary.md@2 --project demo

step "deleting the session keeps the lineage explainable"
reviewtrail session rm "$session"
reviewtrail provenance summary.md@1 --project demo | tail -n 3

# --- human review: a campaign of prompts, candidate runs, blinded pairwise decisions, an export
data="$here/scripts/demo_data"
campaign=(support-triage --version 1)

step "human review: import a campaign (two scenario families, one private prompt)"
reviewtrail campaign import "$data/campaign.yaml"
reviewtrail campaign ls

step "run two scripted candidate agents over every prompt (no network), then freeze the pairs"
reviewtrail campaign run "${campaign[@]}" --agents "$data/agents.yaml" | tail -n 1
reviewtrail campaign materialize "${campaign[@]}" | tail -n 1
reviewtrail campaign settings "${campaign[@]}" --training

step "a reviewer's queue card: blinded, candidates A and B only"
export REVIEWTRAIL_REVIEWER_ID=demo-reviewer  # every decision records who made it
reviewtrail review queue "${campaign[@]}" --limit 1

# pick PROMPT_TEXT [RESPONSE_TEXT]: the item over that prompt, and the position (A or B) of the
# candidate whose response holds RESPONSE_TEXT, read from the queue's JSON.
pick() {
  reviewtrail review queue "${campaign[@]}" --json | python3 -c '
import json, sys
[card] = [c for c in json.load(sys.stdin) if sys.argv[1] in c["prompt"]]
wanted = sys.argv[2:] and sys.argv[2]
print(card["itemId"], *[c["position"] for c in card["candidates"] if wanted and wanted in c["response"]])
' "$@"
}
decision_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["decisionId"])'; }

step "decide: prefer the policy-faithful reply, offered for training"
read -r late late_pos <<<"$(pick "40 days after purchase" "store credit since")"
first=$(reviewtrail review decide "$late" --prefer "$late_pos" --strength slight --reason wrong-policy \
  --use-for-training --json | decision_id)
echo "decision $first: prefer $late_pos (slight)"

step "decide again: a second look supersedes that decision; provenance shows once decided"
reviewtrail review decide "$late" --prefer "$late_pos" --strength strong --reason wrong-policy \
  --use-for-training --supersedes "$first" | sed -n 1,3p
reviewtrail review history "$late"

step "another reviewer deciding that item without naming the active decision is told, not overwritten"
REVIEWTRAIL_REVIEWER_ID=second-reviewer reviewtrail review decide "$late" --tie || echo "exit code: $?"

step "decide: a tie, a correction (neither is acceptable), a private prompt, one more prefer"
decide() {  # decide LABEL ITEM FLAGS...: one line per decision
  local label=$1; shift
  printf '%-24s' "$label" && reviewtrail review decide "$@" | sed -n 1p
}
read -r game <<<"$(pick "opened game")"
decide "opened game, public:" "$game" --tie --note "both are fine"
read -r gift <<<"$(pick "gift with no receipt")"
decide "gift, public:" "$gift" --correct "$data/correction.txt" --reason unsupported --use-for-training
read -r damaged damaged_pos <<<"$(pick "damaged parcel" "a replacement ships")"
decide "damaged, private:" "$damaged" --prefer "$damaged_pos" --strength slight --use-for-training
read -r lost lost_pos <<<"$(pick "never arrived" "trace with the carrier")"
decide "never arrived, public:" "$lost" --prefer "$lost_pos" --strength strong --use-for-training

step "export: only active, preauthorized, public-source prefer/correct decisions become examples"
reviewtrail review export "${campaign[@]}" --out datasets
private_prompt="Customer #4471 (Dana Whitfield, 12 Larch Lane) reports a damaged parcel."
tie_prompt="A customer asks for a refund of an opened game"
for text in "$private_prompt" "$tie_prompt"; do
  if grep -rlF -- "$text" datasets; then
    echo "demo failed: the export holds \"$text\"" >&2
    exit 1
  fi
  echo "grep -rF \"$text\" datasets: nothing found"
done

step "close the loop: a training receipt binds a checkpoint and its held-out evaluation to the export"
reviewtrail campaign receipt "${campaign[@]}" --export-manifest datasets/manifest.json \
  --checkpoint triage-ckpt-0001 --eval "$data/eval.json"

step "campaign quality (owner only): coverage per scenario family, and standings"
reviewtrail campaign coverage "${campaign[@]}" --export-manifest datasets/manifest.json
reviewtrail campaign standings "${campaign[@]}" --rounds 200

step "verify: everything intact"
reviewtrail verify

step "anchor the chain: a signed checkpoint kept outside the store, then verified against"
anchors="$work/anchors" && mkdir -p "$anchors"   # outside the store; in real use, another machine
python3 - "$anchors" <<'PY'
import sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
key = Ed25519PrivateKey.generate()
open(f"{sys.argv[1]}/rt.pem", "wb").write(key.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
open(f"{sys.argv[1]}/rt.pub", "wb").write(key.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
PY
reviewtrail ledger checkpoint --key "$anchors/rt.pem" --out "$anchors/checkpoint.json"
reviewtrail verify --checkpoint "$anchors/checkpoint.json" --public-key "$anchors/rt.pub"

step "tamper with one byte of a stored object"
hex=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"].split(":")[1])' "$csv")
case "${REVIEWTRAIL_CAS_URL:-}" in
  s3://*)  # the objects are in a bucket (make demo-scale): overwrite one there, as anyone with its keys could
    "$here/.venv/bin/python" - "$REVIEWTRAIL_CAS_URL" "$hex" <<'PY'
import sys
import boto3
bucket, _, prefix = sys.argv[1].removeprefix("s3://").partition("/")
key = f"{prefix.rstrip('/') + '/' if prefix else ''}versioning/data/blobs/sha256/{sys.argv[2]}"
s3 = boto3.client("s3")
b = bytearray(s3.get_object(Bucket=bucket, Key=key)["Body"].read()); b[0] ^= 0x01
s3.put_object(Bucket=bucket, Key=key, Body=bytes(b))
print(f"flipped one bit of s3://{bucket}/{key}")
PY
    ;;
  *)
    blob="$REVIEWTRAIL_STORE/versioning/data/blobs/sha256/$hex"
    chmod u+w "$blob"
    python3 - "$blob" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read()); b[0] ^= 0x01
open(p, "wb").write(bytes(b))
PY
    ;;
esac

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
