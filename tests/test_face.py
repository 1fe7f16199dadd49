"""A package's face (reviewtrail._face): each public name is written once, as a re-export line that
type checkers read, and a lazy face loads it from its module on first use, never at import."""

from __future__ import annotations

import importlib
import importlib.util
import keyword
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail._face import reexports

FACE = '''\
"""A face."""

import typing

from reviewtrail import _face
from {pkg}._eager import EAGER as EAGER

if typing.TYPE_CHECKING:
    from {pkg}._heavy import Heavy as Heavy
    from {pkg}._heavy import (  # the rest of it (see _heavy)
        heavy_call as heavy_call,
        HEAVY_LIMIT as HEAVY_LIMIT,  # a bound
    )
    from {pkg}._heavy import helper
else:
    __getattr__, __dir__ = _face.lazy(__name__)
'''


@pytest.fixture
def face(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[str]:
    """A package ``facepkg_<test>`` in a folder on sys.path: an eager and a lazy module, the lazy
    one noting in ``LOADED`` that it was imported."""
    pkg = f"facepkg_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"
    root = tmp_path / pkg
    root.mkdir()
    (root / "__init__.py").write_text(FACE.format(pkg=pkg))
    (root / "_eager.py").write_text("EAGER = 1\n")
    (root / "_heavy.py").write_text(
        "import sys\nsys.modules[__name__.rsplit('.', 1)[0]].LOADED = True\n"
        "class Heavy: ...\ndef heavy_call(): return 2\nHEAVY_LIMIT = 3\ndef helper(): ...\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m == pkg or m.startswith(f"{pkg}.")]:
        del sys.modules[name]


def test_importing_a_lazy_face_loads_none_of_its_lazy_names(face: str) -> None:
    module = importlib.import_module(face)
    assert f"{face}._heavy" not in sys.modules
    assert module.EAGER == 1
    assert not hasattr(module, "LOADED")


def test_a_name_is_loaded_from_its_module_on_first_use_and_kept(face: str) -> None:
    module = importlib.import_module(face)
    assert module.heavy_call() == 2
    assert module.LOADED is True
    assert vars(module)["heavy_call"] is sys.modules[f"{face}._heavy"].heavy_call


def test_all_and_dir_list_every_reexport_once(face: str) -> None:
    module = importlib.import_module(face)
    assert module.__all__ == ["EAGER", "Heavy", "heavy_call", "HEAVY_LIMIT"]
    assert {"EAGER", "Heavy", "heavy_call", "HEAVY_LIMIT"} <= set(dir(module))
    assert f"{face}._heavy" not in sys.modules  # listing the names loads none


def test_star_import_gives_every_reexport(face: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {face} import *", namespace)
    assert {"EAGER", "Heavy", "heavy_call", "HEAVY_LIMIT"} <= set(namespace)
    assert "helper" not in namespace and "typing" not in namespace


def test_an_import_without_its_alias_is_not_exported(face: str) -> None:
    module = importlib.import_module(face)
    with pytest.raises(AttributeError, match=f"module '{face}' has no attribute 'helper'"):
        _ = module.helper
    with pytest.raises(ImportError, match="cannot import name 'nothing'"):
        exec(f"from {face} import nothing", {})


def test_a_face_may_name_a_module_it_cannot_import_for_type_checkers(face: str) -> None:
    from reviewtrail import _face

    module = importlib.import_module(face)
    getattr_, dir_ = _face.lazy(face, {"json": ("dumps",)})
    assert getattr_("dumps") is __import__("json").dumps
    assert "EAGER" in getattr_("__all__") and "dumps" in dir_()
    del module


def test_a_renamed_reexport_is_refused() -> None:
    with pytest.raises(ImportError, match=r"pkg renames pkg\._a\.Thing as Other: a face keeps one name"):
        reexports("pkg", "from pkg._a import Thing as Other\n")


def test_a_name_reexported_from_two_modules_is_refused() -> None:
    with pytest.raises(ImportError, match="pkg re-exports Thing twice"):
        reexports("pkg", "from pkg._a import Thing as Thing\nfrom pkg._b import Thing as Thing\n")


def test_imports_from_other_packages_are_not_reexports() -> None:
    source = "from other._a import Thing as Thing\nfrom pkgx._a import More as More\nfrom pkg import _face\n"
    assert reexports("pkg", source) == {}


_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))
_MODULES = st.lists(st.from_regex(r"_?[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=3).map(".".join)


@given(
    table=st.dictionaries(_NAMES, _MODULES, max_size=12),
    parenthesized=st.booleans(),
    comments=st.booleans(),
    indent=st.sampled_from(["", "    "]),
)
def test_reexports_reads_back_every_written_line(
    table: dict[str, str], parenthesized: bool, comments: bool, indent: str
) -> None:
    """Whatever names and modules, one line per name or one parenthesized import per module, with
    or without comments, the table read back is the one written."""
    by_module: dict[str, list[str]] = {}
    for name, module in table.items():
        by_module.setdefault(module, []).append(name)
    lines = ["import typing", "from pkg import _face", "if typing.TYPE_CHECKING:"]
    for module, names in by_module.items():
        note = "  # why (see f(x))" if comments else ""
        if parenthesized:
            body = "".join(f"    {n} as {n},{note}\n" for n in names)
            lines.append(f"from pkg.{module} import ({note}\n{body})")
        else:
            lines += [f"from pkg.{module} import {n} as {n}{note}" for n in names]
    source = textwrap.indent("\n".join(lines[2:]), indent)
    assert reexports("pkg", "\n".join([*lines[:2], source])) == {n: f"pkg.{m}" for n, m in table.items()}


def test_a_face_in_a_zip_archive_reads_its_source_through_its_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    pkg = "facepkg_zipped"
    archive = tmp_path / "faces.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(f"{pkg}/__init__.py", FACE.format(pkg=pkg))
        zipped.writestr(f"{pkg}/_eager.py", "EAGER = 1\n")
        zipped.writestr(f"{pkg}/_heavy.py", "class Heavy: ...\ndef heavy_call(): return 2\nHEAVY_LIMIT = 3\n")
    monkeypatch.syspath_prepend(str(archive))
    try:
        module = importlib.import_module(pkg)
        assert (module.heavy_call(), module.__all__) == (2, ["EAGER", "Heavy", "heavy_call", "HEAVY_LIMIT"])
    finally:
        for name in [m for m in sys.modules if m == pkg or m.startswith(f"{pkg}.")]:
            del sys.modules[name]


def test_a_face_without_its_source_says_so(face: str) -> None:
    import py_compile

    init = Path(importlib.util.find_spec(face).origin)  # type: ignore[union-attr, arg-type]
    py_compile.compile(str(init), cfile=str(init.with_suffix(".pyc")))
    init.unlink()  # only the legacy-placed bytecode is left: a sourceless install
    importlib.invalidate_caches()
    module = importlib.import_module(face)
    with pytest.raises(ImportError, match="reads its re-exports from its source, and this install has none"):
        module.heavy_call  # noqa: B018
