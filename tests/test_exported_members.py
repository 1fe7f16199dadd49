"""The curated public API: each package's ``__all__`` lists exactly the public names it defines or
re-exports, every private module declares ``__all__``, and no module imports another package's
private modules (README, "Library use"; docs/architecture.md, "Packages")."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

import reviewtrail
from reviewtrail._face import reexports

SRC = Path(reviewtrail.__file__).parent
PACKAGES = sorted(p.parent.name for p in SRC.glob("*/__init__.py"))
# The packages split into parts, each part a face of its own, and their parts.
SPLIT = {
    "human_review": ("campaigns", "export", "quality", "reads", "records", "rules", "session"),
    "tracing": ("commands", "custody", "files", "native", "otel", "rules"),
    "provenance": ("artifacts", "export", "kernels", "records", "runs", "sandbox"),
}
PARTS = [f"{package}.{part}" for package, parts in SPLIT.items() for part in parts]


def _public_names(module: types.ModuleType) -> set[str]:
    """Names a ``from package import *`` caller could mean: not private, not a submodule, not the
    ``annotations`` future flag (``dir`` lists the names a lazy face loads on first use too)."""
    return {
        name
        for name in dir(module)
        if not name.startswith("_")
        and not isinstance(vars(module).get(name), types.ModuleType)
        and name != "annotations"
    }


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _package_of(path: Path) -> str:
    """The subpackage a source file belongs to, or ``""`` for the top-level modules."""
    rel = path.relative_to(SRC).parts
    return rel[0] if len(rel) > 1 else ""


def _imported_modules(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in ``tree``, ``from a import b`` giving ``a.b`` too."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _private_imports(own: str, source: str) -> list[tuple[int, str]]:
    """(line, module) of each import in ``source`` of another package's private module; ``own``
    is the package the source belongs to."""
    found = []
    for line, module in _imported_modules(ast.parse(source)):
        parts = module.split(".")
        if parts[0] != "reviewtrail" or len(parts) < 3 or parts[1] == own:
            continue
        private = next((i for i in range(2, len(parts)) if parts[i].startswith("_")), None)  # in a folder too
        if parts[1] in PACKAGES and private is not None:
            found.append((line, ".".join(parts[: private + 1])))
    return sorted(set(found))


def _cross_package_private_imports() -> list[str]:
    return [
        f"{path.relative_to(SRC.parent)}:{line}: {module}"
        for path in _sources()
        for line, module in _private_imports(_package_of(path), path.read_text(encoding="utf-8"))
    ]


def test_packages_are_found() -> None:
    assert {"cas", "cli", "evidence", "ledger", "models", "provenance", "reviewer", "tracing"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name: str) -> None:
    package = importlib.import_module(f"reviewtrail.{name}")
    exported = list(package.__all__)
    assert len(exported) == len(set(exported)), f"reviewtrail.{name}.__all__ repeats a name"
    assert set(exported) == _public_names(package)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_exists(name: str) -> None:
    package = importlib.import_module(f"reviewtrail.{name}")
    missing = [n for n in package.__all__ if not hasattr(package, n)]
    assert missing == []


@pytest.mark.parametrize("name", PACKAGES)
def test_no_export_is_a_second_name(name: str) -> None:
    """One name per thing: a package re-exports its modules' names as they are, never renamed
    (two names for one constant, such as a chunk size, is what this keeps out)."""
    tree = ast.parse((SRC / name / "__init__.py").read_text(encoding="utf-8"))
    renamed = [
        f"{node.module}.{alias.name} as {alias.asname}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"reviewtrail.{name}.")
        for alias in node.names
        if alias.asname not in (None, alias.name)
    ]
    assert renamed == []


def test_every_private_module_declares_all() -> None:
    missing = []
    for path in _sources():
        if not path.name.startswith("_") or path.name.startswith("__"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = any(
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            for node in tree.body
        )
        if not declared:
            missing.append(str(path.relative_to(SRC.parent)))
    assert missing == []


def test_private_module_all_names_exist() -> None:
    for path in _sources():
        if not path.name.startswith("_") or path.name.startswith("__"):
            continue
        dotted = ".".join(("reviewtrail", *path.relative_to(SRC).with_suffix("").parts))
        module = importlib.import_module(dotted)
        exported = getattr(module, "__all__", [])
        assert [n for n in exported if not hasattr(module, n)] == [], dotted


def _module_imports(tree: ast.Module) -> set[str]:
    """The names a module binds by its imports at module level, at any depth of ``if``, ``try`` or
    ``with`` (those under ``if TYPE_CHECKING:`` too), but not inside a function or a class."""
    names: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return names


def test_the_import_scan_sees_imports_at_any_depth_outside_functions() -> None:
    source = (
        "import a.b\nfrom c import d as e\nif X:\n    from f import g\nelse:\n    import h\n"
        "try:\n    from i import j\nexcept ImportError:\n    if Y:\n        from k import m\n"
        "def f():\n    from n import o\nclass C:\n    from p import q\n"
    )
    assert _module_imports(ast.parse(source)) == {"a", "e", "g", "h", "j", "m"}


# The one name a private module lists only for its face: the models face re-exports its own modules'
# names alone, and ``parse_retry_after`` is defined below every package (``reviewtrail._retry_after``).
_LISTED_FOR_THE_FACE = {"reviewtrail.models._retry.parse_retry_after"}


@pytest.mark.parametrize("name", sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()))
def test_private_modules_list_only_names_they_define(name: str) -> None:
    """A private module's ``__all__`` lists what it defines, never a name it imports: its callers
    import each name from the module that defines it (a package's face re-exports, it alone)."""
    listed = []
    for path in sorted((SRC / name).rglob("_*.py")):
        if path.name == "__init__.py":
            continue
        dotted = ".".join(("reviewtrail", *path.relative_to(SRC).with_suffix("").parts))
        imported = _module_imports(ast.parse(path.read_text(encoding="utf-8")))
        listed += [f"{dotted}.{n}" for n in getattr(importlib.import_module(dotted), "__all__", []) if n in imported]
    assert [n for n in listed if n not in _LISTED_FOR_THE_FACE] == []
    assert {n for n in _LISTED_FOR_THE_FACE if n.startswith(f"reviewtrail.{name}.")} <= set(listed)  # still needed


def test_no_module_imports_another_packages_private_modules() -> None:
    assert _cross_package_private_imports() == []


def test_the_scan_sees_a_cross_package_private_import() -> None:
    """The scan itself: each form of a private import from another package is found; one from the
    same package, a public one and the top-level rule modules are not."""
    source = (
        "from reviewtrail.ledger.records._envelope import new_id\n"
        "import reviewtrail.cas._refs\n"
        "def f():\n"
        "    from reviewtrail.tracing.custody import _record\n"
        "from reviewtrail.ledger import new_id\n"
        "from reviewtrail.provenance.artifacts._diff import artifact_version_diff\n"
        "from reviewtrail._durable import fsync_dir\n"
        "from reviewtrail.tracing.part import _rule\n"
    )
    assert _private_imports("provenance", source) == [
        (1, "reviewtrail.ledger.records._envelope"),
        (2, "reviewtrail.cas._refs"),
        (4, "reviewtrail.tracing.custody._record"),
        (8, "reviewtrail.tracing.part._rule"),
    ]


# Every package's face (``reviewtrail.cli`` defines its entry point, ``main``, and re-exports nothing).
FACES = [
    "reviewtrail",
    *(f"reviewtrail.{name}" for name in PACKAGES if name != "cli"),
    *(f"reviewtrail.{part}" for part in PARTS),
]
# The names the top-level face loads from reviewtrail.instrumentation, which it cannot import for type checkers.
ROOT_NAMED = {"instrument", "reviewer_call", "ReviewerCall"}


def _face_source(package: str) -> str:
    return (SRC.parent / package.replace(".", "/") / "__init__.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("package", FACES)
def test_every_face_writes_each_name_once(package: str) -> None:
    """A face keeps no name table of its own (no ``__all__``, no name map, no ``__getattr__`` of its
    own): each public name stands once, as its re-export line, and ``__all__`` is read from those."""
    tree = ast.parse(_face_source(package))
    tables = [
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in ("__all__", "_LAZY")
    ]
    own_getattr = [node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    assert (tables, own_getattr) == ([], [])
    module = importlib.import_module(package)
    written = set(reexports(package, _face_source(package)))
    assert set(module.__all__) - (ROOT_NAMED if package == "reviewtrail" else set()) == written


@pytest.mark.parametrize("part", PARTS)
def test_each_part_is_a_face_that_loads_nothing_up_front(part: str) -> None:
    package = part.split(".", 1)[0]
    code = (
        "import sys\n"
        f"import reviewtrail.{part} as part\n"
        f"print(len(part.__all__), sorted(m for m in sys.modules if m.startswith('reviewtrail.{package}.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) > 0
    assert out[1].strip() == repr([f"reviewtrail.{part}"])
    face = importlib.import_module(f"reviewtrail.{part}")
    assert [name for name in face.__all__ if not hasattr(face, name)] == []


@pytest.mark.parametrize("package", SPLIT)
def test_a_split_packages_face_gives_only_what_the_composition_root_takes(package: str) -> None:
    face = importlib.import_module(f"reviewtrail.{package}")
    assert sorted(face.__all__) == ["PROJECTIONS", "RECORD_TYPES", "RECORD_TYPE_NAMES"]


@pytest.mark.parametrize("package", SPLIT)
def test_callers_import_the_part_they_use(package: str) -> None:
    """Outside the package, nothing imports a name through a split package's face but its record
    types and query tables (the composition root's): the command line, the web pages, the MCP
    tools, the benches and the tests import the part."""
    allowed = {"PROJECTIONS", "RECORD_TYPES", "RECORD_TYPE_NAMES", *SPLIT[package]}
    roots = [SRC.parent.parent / folder for folder in ("src", "tests", "bench", "scripts")]
    found = []
    for path in sorted(p for root in roots for p in root.rglob("*.py") if package not in p.parent.parts):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == f"reviewtrail.{package}":
                found += [f"{path.name}:{node.lineno} {a.name}" for a in node.names if a.name not in allowed]
    assert found == []
