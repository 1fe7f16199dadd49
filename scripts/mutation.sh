#!/usr/bin/env bash
# Mutation testing of the rule modules (`make mutation`; not part of `make test`).
#
# mutmut 3 mutates a copy of the code and runs, for each mutant, the tests that reach
# the mutated function. The run happens in a scratch copy of the project
# (build/mutation/, git-ignored): the working tree is only read. The score of a module
# is killed / (total - equivalent); the equivalent mutants (changes no test can see,
# each with its reason) are listed in scripts/mutation_equivalent.txt and printed apart.
#
# Note: mutmut 3 does not mutate decorated functions (@cache, pydantic validators) nor
# module-level tables; the rules they hold are pinned by tests all the same.
#
# Usage: scripts/mutation.sh [MODULE ...]   (default: every rule module below)
#   MUTATION_JOBS=N   parallel mutant workers (default 2)
#   MUTATION_KEEP=1   keep build/mutation/ and its results from the previous run
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
WORK="$ROOT/build/mutation"
EQUIVALENT="$ROOT/scripts/mutation_equivalent.txt"
JOBS="${MUTATION_JOBS:-2}"

# module (under src/reviewtrail) -> the test files that pin it
declare -A TESTS=(
    [migrate.py]="tests/test_migrate_checks.py"
    [tracing/rules/_assurance.py]="tests/test_tracing_rules.py tests/test_pins_tracing.py"
    [tracing/files/_modes.py]="tests/test_tracing_rules.py tests/test_pins_tracing.py"
    [tracing/rules/_families.py]="tests/test_tracing_rules.py tests/test_pins_tracing.py"
    [cas/_refs.py]="tests/test_cas_contract.py tests/test_pins_refs.py tests/test_payload_structs.py"
    [reviewer/_cite_markers.py]="tests/test_citation_reference_rules.py tests/test_review_citations.py tests/test_pins_citations.py"
    [canonical.py]="tests/test_canonical.py tests/test_pins_canonical.py"
    [ledger/records/_envelope.py]="tests/test_ledger_contract.py tests/test_pins_envelope.py"
    [human_review/rules/_item_rules.py]="tests/test_human_review_items.py tests/test_pins_human_review.py tests/test_self_identification_items.py"
    [human_review/records/_self_identification.py]="tests/test_self_identification.py tests/test_self_identification_items.py"
    [human_review/rules/_run_rules.py]="tests/test_human_review_run_rules.py tests/test_pins_human_review.py"
    [human_review/rules/_decision_rules.py]="tests/test_human_review_decisions.py tests/test_pins_human_review.py"
    [human_review/rules/_eligibility.py]="tests/test_human_review_eligibility.py tests/test_pins_human_review.py"
    [human_review/rules/_export_rows.py]="tests/test_human_review_export_rows.py tests/test_pins_human_review.py"
    [human_review/quality/_bt_fit.py]="tests/test_human_review_standings.py tests/test_pins_human_review.py"
    [human_review/quality/_standings.py]="tests/test_human_review_standings.py tests/test_pins_human_review.py"
    [human_review/quality/_position_bias.py]="tests/test_human_review_position_bias.py tests/test_pins_human_review.py"
    [agents/_paths.py]="tests/test_mcp_trust.py tests/test_mcp_paths.py"
    [agents/_toolbox.py]="tests/test_mcp_trust.py tests/test_mcp_server.py"
    [agents/_start.py]="tests/test_mcp_trust.py"
    [web/_capability.py]="tests/test_web_capability.py"
    [web/_private_file.py]="tests/test_web_capability.py"
    [web/_nonces.py]="tests/test_web_capability.py"
    [web/_proxy_auth.py]="tests/test_web_proxy_auth.py tests/test_web_proxy_sessions.py"
    [web/_proxy_sessions.py]="tests/test_web_proxy_sessions.py"
    [ledger/signing/_gate.py]="tests/test_signed_gates.py tests/test_signed_records.py"
    [ledger/signing/_check.py]="tests/test_signed_records.py tests/test_signed_gates.py tests/test_signed_writers.py"
    [ledger/contract/_key_state.py]="tests/test_signed_writers.py tests/test_signed_records.py"
    [ledger/contract/_signature_gate.py]="tests/test_signed_gates.py tests/test_signed_records.py"
)
ORDER=(migrate.py tracing/rules/_assurance.py tracing/files/_modes.py tracing/rules/_families.py cas/_refs.py
    reviewer/_cite_markers.py canonical.py ledger/records/_envelope.py
    human_review/rules/_item_rules.py human_review/records/_self_identification.py human_review/rules/_run_rules.py
    human_review/rules/_decision_rules.py
    human_review/rules/_eligibility.py human_review/rules/_export_rows.py human_review/quality/_bt_fit.py
    human_review/quality/_standings.py human_review/quality/_position_bias.py
    agents/_paths.py agents/_toolbox.py agents/_start.py web/_capability.py web/_private_file.py web/_nonces.py web/_proxy_auth.py web/_proxy_sessions.py
    ledger/signing/_gate.py ledger/signing/_check.py ledger/contract/_key_state.py ledger/contract/_signature_gate.py)

if [ "$#" -gt 0 ]; then
    ORDER=("$@")
fi
for module in "${ORDER[@]}"; do
    if [ -z "${TESTS[$module]:-}" ]; then
        echo "error: module: $module is not one of: ${!TESTS[*]}" >&2
        exit 2
    fi
done

# Only the test files that exist (a pin file may not have been written yet).
declare -A SELECTED=()
only_mutate=()
for module in "${ORDER[@]}"; do
    only_mutate+=("\"src/reviewtrail/$module\"")
    for test in ${TESTS[$module]}; do
        [ -f "$ROOT/$test" ] && SELECTED[$test]=1
    done
done
tests=()
for test in "${!SELECTED[@]}"; do
    tests+=("\"$test\"")
done

if [ "${MUTATION_KEEP:-0}" != 1 ]; then
    rm -rf "$WORK"
fi
mkdir -p "$WORK"
# A snapshot of the working tree: sources, tests, docs (some tests hold tables to them) and the
# project settings.
rm -rf "$WORK/src" "$WORK/tests" "$WORK/docs"
cp -R "$ROOT/src" "$ROOT/tests" "$ROOT/docs" "$WORK/"
find "$WORK/src" "$WORK/tests" -name __pycache__ -prune -exec rm -rf {} +
join() {
    local IFS=,
    echo "$*"
}
{
    cat "$ROOT/pyproject.toml"
    cat <<EOF

[tool.mutmut]
source_paths = ["src/reviewtrail"]
only_mutate = [$(join "${only_mutate[@]}")]
also_copy = ["docs"]
pytest_add_cli_args = ["-q", "-p", "no:cacheprovider", "-m", "not postgres and not slow"]
pytest_add_cli_args_test_selection = [$(join "${tests[@]}")]
timeout_multiplier = 5.0
use_git_change_detection = false
EOF
} >"$WORK/pyproject.toml"

cd "$WORK"
# Results are read from the .meta files below, not from mutmut's progress output.
"$VENV/bin/mutmut" run --max-children "$JOBS" >"$WORK/run.log" 2>&1 || {
    tail -n 40 "$WORK/run.log" >&2
    echo "error: mutmut: run failed (full log: $WORK/run.log)" >&2
    exit 1
}

"$VENV/bin/python" - "$EQUIVALENT" "${#TESTS[@]}" "${ORDER[@]}" <<'PY'
"""Per-module scores from mutmut's .meta files."""

import json
import sys
from pathlib import Path

KILLED = {1, 3, 36, 24, -24, 152, 255}  # a failing test, or a timeout (the mutant never returns)

equivalent_file, modules = Path(sys.argv[1]), sys.argv[3:]
equivalent: dict[str, str] = {}
if equivalent_file.exists():
    for line in equivalent_file.read_text(encoding="utf-8").splitlines():
        name, _, reason = line.partition(" ")
        if name and not name.startswith("#"):
            equivalent[name] = reason.strip()

seen: set[str] = set()
print(f"{'module':<34} {'killed':>7} {'total':>6} {'equiv':>6} {'score':>7}")
survivors: list[str] = []
for module in modules:
    meta = json.loads(Path("mutants/src/reviewtrail", module + ".meta").read_text(encoding="utf-8"))
    codes: dict[str, int | None] = meta["exit_code_by_key"]
    killed = sum(1 for code in codes.values() if code in KILLED)
    equiv = [name for name in codes if name in equivalent]
    seen.update(equiv)
    for name, code in sorted(codes.items()):
        if code not in KILLED and name not in equivalent:
            survivors.append(f"  {name} (exit {code})")
    counted = len(codes) - sum(1 for name in equiv if codes[name] not in KILLED)
    score = 100.0 * killed / counted if counted else 100.0
    print(f"{module:<34} {killed:>7} {len(codes):>6} {len(equiv):>6} {score:>6.1f}%")

print("\nequivalent mutants (not counted):")
for name in sorted(seen):
    print(f"  {name}: {equivalent[name]}")
if not seen:
    print("  (none)")
stale = sorted(set(equivalent) - seen)
if stale and len(modules) == int(sys.argv[2]):
    print("\nlisted as equivalent but no longer generated (update scripts/mutation_equivalent.txt):")
    print("\n".join(f"  {name}" for name in stale))
print("\nsurviving mutants (see one with: cd build/mutation && ../../.venv/bin/mutmut show NAME):")
print("\n".join(survivors) if survivors else "  (none)")
PY
