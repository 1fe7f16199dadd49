"""Commands over a campaign refuse an unknown campaign version, an export folder that cannot be
made and an unbounded bootstrap, with the field named and nothing recorded or written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import init_cli_store, open_cli_store, run_cli
from tests.support.human_review import campaign_with_items


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(root) as store:
        campaign_with_items(store, 1)
    (root / "eval.json").write_text(json.dumps({"accuracy": 0.9}))
    (root / "manifest.json").write_text(json.dumps({"manifestVersion": 1, "files": []}))
    return root


def head(project: Path) -> int:
    with open_cli_store(project) as store:
        env = store.ledger.head()
        return env.seq if env is not None else 0


@pytest.mark.parametrize(
    "argv",
    [
        ["review", "export", "nope", "--version", "1", "--out", "out"],
        ["review", "export", "camp", "--version", "9", "--out", "out"],
        ["campaign", "coverage", "nope", "--version", "1"],
        ["campaign", "standings", "nope", "--version", "1"],
        ["campaign", "materialize", "nope", "--version", "1"],
        ["campaign", "receipt", "nope", "--version", "1", "--export-manifest", "manifest.json",
         "--checkpoint", "ck-1", "--eval", "eval.json"],
        ["review", "session", "nope"],
    ],
)  # fmt: skip
def test_an_unknown_campaign_version_is_not_found(project: Path, argv: list[str]) -> None:
    before = head(project)
    code, out, err = run_cli(*argv, "--json") if argv[1] != "session" else run_cli(*argv)
    assert code == 3, (out, err)
    assert "campaign" in err
    assert head(project) == before
    assert not (project / "out").exists()


def test_an_export_folder_that_cannot_be_made_is_refused_naming_out(project: Path) -> None:
    (project / "taken").write_text("a file, not a folder")
    for out in ("taken/inside", "/proc/no-such-folder/x"):
        code, _, err = run_cli("review", "export", "camp", "--version", "1", "--out", out)
        assert code == 2, err
        assert "out" in err


def test_standings_refuse_an_unbounded_bootstrap(project: Path) -> None:
    code, _, err = run_cli("campaign", "standings", "camp", "--version", "1", "--rounds", str(10**8))
    assert code == 2
    assert "rounds" in err
    code, out, err = run_cli("campaign", "standings", "camp", "--version", "1", "--rounds", "10000", "--json")
    assert code == 0, err
    assert json.loads(out)["rounds"] == 10000
