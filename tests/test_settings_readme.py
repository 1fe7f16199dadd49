"""Every environment variable the code reads is documented in the README (the scan is in
``test_settings_edge``: the loader's names, ``env.get("X")`` and the like, typer's ``envvar``)."""

from __future__ import annotations

import re

from test_settings_edge import ROOT, variables_read


def test_every_environment_variable_the_code_reads_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = {
        name: sorted(where)
        for name, where in variables_read().items()
        if re.search(rf"(?<![A-Z0-9_]){name}(?![A-Z0-9_])", readme) is None
    }
    assert missing == {}, f"document these in the README's Configuration section: {missing}"
