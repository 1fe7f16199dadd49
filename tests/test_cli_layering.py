"""The command line is a thin shell: it imports only the public names of the library's packages
(never a package's ``_private`` module) and its functions stay short (parse, one library call, print)."""

from __future__ import annotations

import ast
from pathlib import Path

import reviewtrail.cli

CLI = Path(reviewtrail.cli.__file__).parent
PACKAGES = sorted(p.parent.name for p in CLI.parent.glob("*/__init__.py"))
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(CLI.rglob("*.py"))


def private_imports(source: str) -> list[str]:
    """Each import in ``source`` (at any depth, TYPE_CHECKING blocks included) that reaches into
    another package's private module, as ``line: module``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            into_package = len(parts) >= 3 and parts[0] == "reviewtrail" and parts[1] in PACKAGES
            private = next((i for i in range(2, len(parts)) if parts[i].startswith("_")), None)  # in a folder too
            if into_package and parts[1] != "cli" and private is not None:
                found.append(f"{node.lineno}: {'.'.join(parts[: private + 1])}")
            elif (
                len(parts) >= 2
                and parts[0] == "reviewtrail"
                and parts[1].startswith("_")
                and not parts[1].startswith("__")
            ):
                found.append(f"{node.lineno}: {'.'.join(parts[:2])}")  # a top-level private module
    return sorted(set(found))


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Functions of ``source`` longer than ``limit`` lines (decorators excluded), as ``name (lines)``."""
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_the_checks_find_what_they_look_for() -> None:
    source = (
        "from reviewtrail.tracing.files._reader import find_run\n"
        "def f():\n"
        "    import reviewtrail.provenance.sandbox._sandbox\n"
        "    from reviewtrail.cas import _refs\n"
        "    from reviewtrail.tracing import find_run\n"
        "    from reviewtrail.cli._output import print_json\n"
        "    from reviewtrail._redact import redact_url\n"
    )
    assert private_imports(source) == [
        "1: reviewtrail.tracing.files._reader",
        "3: reviewtrail.provenance.sandbox._sandbox",
        "4: reviewtrail.cas._refs",
        "7: reviewtrail._redact",
    ]
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES - 1))
    assert long_functions(f"def short():\n{body}\n") == []
    assert long_functions(f"def long():\n{body}\n    x = 0\n") == [f"long ({MAX_FUNCTION_LINES + 1})"]


def test_the_cli_imports_no_private_module_of_another_package() -> None:
    found = [f"{path.name}:{hit}" for path in _modules() for hit in private_imports(path.read_text(encoding="utf-8"))]
    assert found == []


def test_no_cli_function_is_longer_than_80_lines() -> None:
    found = [f"{path.name}: {hit}" for path in _modules() for hit in long_functions(path.read_text(encoding="utf-8"))]
    assert found == []
