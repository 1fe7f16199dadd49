"""The import contract of ``make lint`` (``[tool.importlinter]`` in pyproject.toml): layers that
import only downwards, and no import cycle, between top-level modules and packages or inside one.

Each test lints a copy of the package, so an import added to break a layer never touches the
real tree; the copy comes first on ``PYTHONPATH``, so it is the copy that is analysed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "src" / "reviewtrail", tmp_path / "src" / "reviewtrail", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "COLUMNS": "1000"}  # one line per contract
    return subprocess.run(
        [str(LINT_IMPORTS), str(tree / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def verdicts(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Each contract of the report by its name's head (before its first ':', e.g. "Layers of
    tracing") -> KEPT or BROKEN."""
    found: dict[str, str] = {}
    for line in result.stdout.splitlines():
        match = re.fullmatch(r"(.+?): .* (KEPT|BROKEN)", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def broken(result: subprocess.CompletedProcess[str]) -> set[str]:
    return {name for name, verdict in verdicts(result).items() if verdict == "BROKEN"}


def add_import(tree: Path, module: str, imported: str) -> None:
    path = tree / "src" / "reviewtrail" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\nimport {imported}  # noqa: E402\n", encoding="utf-8")


def test_the_package_keeps_its_import_contract(tree: Path) -> None:
    result = lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    contracts = (ROOT / "pyproject.toml").read_text(encoding="utf-8").count("[[tool.importlinter.contracts]]")
    assert contracts >= 4
    assert set(verdicts(result).values()) == {"KEPT"} and len(verdicts(result)) == contracts
    assert f"{contracts} kept, 0 broken" in result.stdout


def test_an_upward_import_from_the_cas_breaks_the_layers(tree: Path) -> None:
    add_import(tree, "cas/_refs.py", "reviewtrail.app")
    result = lint(tree)
    assert result.returncode != 0
    assert "reviewtrail.cas._refs -> reviewtrail.app" in result.stdout
    assert {"Layers", "No import cycle"} <= broken(result)  # a cycle too: app imports the store, which imports the CAS


def test_a_domain_package_may_not_import_the_composition_root(tree: Path) -> None:
    add_import(tree, "tracing/custody/_ledger_link.py", "reviewtrail.app")
    result = lint(tree)
    assert result.returncode != 0
    assert "reviewtrail.tracing.custody._ledger_link -> reviewtrail.app" in result.stdout


def test_the_store_may_not_import_a_domain_package(tree: Path) -> None:
    add_import(tree, "store/_store.py", "reviewtrail.evidence")
    result = lint(tree)
    assert result.returncode != 0
    assert "reviewtrail.store._store -> reviewtrail.evidence" in result.stdout


def test_a_cycle_between_two_domain_packages_breaks_the_layers_and_the_no_cycle_contract(tree: Path) -> None:
    add_import(tree, "provenance/records/_records.py", "reviewtrail.evidence")  # evidence already imports provenance
    result = lint(tree)
    assert result.returncode != 0
    # (through the cycle, provenance's records also reach the parts of provenance above them)
    assert {"Layers", "No import cycle"} <= broken(result)
    assert "reviewtrail.provenance.records._records -> reviewtrail.evidence" in result.stdout


def test_independent_siblings_may_not_import_each_other(tree: Path) -> None:
    add_import(tree, "models/_invoke.py", "reviewtrail.tracing")
    result = lint(tree)
    assert result.returncode != 0
    assert "reviewtrail.models._invoke -> reviewtrail.tracing" in result.stdout
    assert broken(result) == {"Layers"}


def test_a_cycle_inside_a_package_is_refused(tree: Path) -> None:
    add_import(tree, "provenance/runs/_snapshot.py", "reviewtrail.provenance.runs._sessions")  # which reaches _snapshot
    result = lint(tree)
    assert result.returncode != 0
    assert broken(result) == {"No import cycle"}
    assert "No cycles are allowed in reviewtrail.provenance" in result.stdout


# A package's part importing a part above it (or a command family importing another): (the module
# changed, the module it now imports, the contract of that package's parts)
UPWARD_IN_A_PACKAGE = {
    "cli": ("cli/review/_campaign_labels.py", "reviewtrail.cli.trace._debug", "The command line"),
    "tracing": ("tracing/rules/_gate.py", "reviewtrail.tracing.files._layout", "Layers of tracing"),
    "ledger": ("ledger/records/_types.py", "reviewtrail.ledger.contract._protocol", "Layers inside the ledger"),
    "provenance": (
        "provenance/artifacts/_diff.py",
        "reviewtrail.provenance.kernels._protocol",
        "Layers inside provenance",
    ),
    "human_review": (
        "human_review/rules/_eligibility.py",
        "reviewtrail.human_review.reads._resolve",
        "Layers of human review",
    ),
}


@pytest.mark.parametrize("package", sorted(UPWARD_IN_A_PACKAGE))
def test_a_part_of_a_package_may_not_import_a_part_above_it(tree: Path, package: str) -> None:
    """Only that package's contract breaks (and the no-cycle one, where the part above already
    imports the one below), never the layers between packages."""
    module, imported, contract = UPWARD_IN_A_PACKAGE[package]
    add_import(tree, module, imported)
    result = lint(tree)
    assert result.returncode != 0
    importer = module.removesuffix(".py").replace("/", ".")
    assert f"reviewtrail.{importer} -> {imported}" in result.stdout or (
        f"reviewtrail.{importer.rsplit('.', 1)[0]} is not allowed to import" in result.stdout
    )
    assert contract in broken(result)
    assert broken(result) <= {contract, "No import cycle"}
