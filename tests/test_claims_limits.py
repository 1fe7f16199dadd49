"""Claims extraction in linear time and bounded memory (issue 29, item 4): large pathological
replies are extracted by ``claims extract --dry-run`` under a generous CPU and address-space limit.

No timing: a resource limit that the quadratic rules (a CPU limit) and the objects built per
citation (an address-space limit) ran into, with a margin of five times or more over what the
extraction needs now.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from reviewtrail.app import init_store
from reviewtrail.config import Settings

# --- large pathological replies under resource limits ----------------------------------------------

# The fixed extraction needs at most 3.3 s of CPU for each reply below (9 s for the JSON of 600,000
# chips) and under 80 MiB of address space: ten and six times that are allowed. The extraction before
# these fixes was killed by the CPU limit on the three quadratic replies and ran out of address
# space on the chips (it held over 900 MiB for them).
CPU_SECONDS = 90
ADDRESS_SPACE = 512 << 20

PATHOLOGICAL = {
    # Each capital after a hyphen started the name-year rule again, which read to the end of the run.
    "hyphenated-capitals": "A claim [ev1] by " + "A-" * 1_000_000 + ".\n",
    # The separator after an identifier keyword (\s*:?\s*) backtracked over the blanked citations.
    "identifier-before-citations": "See doi" + " [ev1]" * 333_333 + ".\n",
    # A heading's section number was tried from every letter of a run of Roman numerals, each read to its end.
    "roman-numerals-heading": "## A claim [ev1] " + "I" * 2_000_000 + "\n",
    # One claim of 600,000 chips: a Match, a Citation and a ClaimCitation model each.
    "dense-chips": "[ev1]" * 600_000 + "\n",
}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _extract(tmp_path: Path, reply: str, *options: str) -> subprocess.CompletedProcess[str]:
    """``claims extract FILE --dry-run`` of ``reply`` on an empty store, as a process under the limits."""
    root = tmp_path / "store"
    url = f"sqlite:///{root / 'ledger.sqlite'}"
    init_store(Settings(store=root, database_url=url)).close()
    path = tmp_path / "reply.md"
    path.write_text(reply, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", "claims", "extract", str(path), "--dry-run", *options],
        capture_output=True,
        text=True,
        env={**_base_env(), "REVIEWTRAIL_STORE": str(root), "REVIEWTRAIL_DATABASE_URL": url},
        cwd=tmp_path,
        preexec_fn=_limits,
    )
    assert done.returncode == 0, f"exit {done.returncode} (negative: killed by that signal); {done.stderr[-500:]}"
    return done


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_a_large_pathological_reply_is_extracted_under_resource_limits(tmp_path: Path, name: str) -> None:
    done = _extract(tmp_path, PATHOLOGICAL[name])
    tokens = PATHOLOGICAL[name].count("[ev1]")
    assert done.stdout.endswith(f"\n1 claim(s); {tokens} unresolved citation(s)\n")
    assert done.stdout.count("[ev1] (UNRESOLVED)") == tokens


def test_a_large_reply_is_written_as_json_under_resource_limits(tmp_path: Path) -> None:
    done = _extract(tmp_path, PATHOLOGICAL["dense-chips"], "--json")
    tokens = PATHOLOGICAL["dense-chips"].count("[ev1]")
    assert done.stdout.startswith('{\n  "claims": [\n    {\n      "claimId": "')
    assert done.stdout.endswith('"citation": "[ev1]"\n    }\n  ],\n  "aliasMap": null\n}\n')
    assert done.stdout.count('"raw": "[ev1]"') == tokens and done.stdout.count('"citation": "[ev1]"') == tokens


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
