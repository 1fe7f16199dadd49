"""The path rule of the MCP server (reviewtrail.agents._paths), on its own: roots, secrets,
system folders, symlinks, hard links, relative paths, sizes, and a read checked by what was
opened. The tools' use of it is in tests/test_mcp_trust.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewtrail.agents._paths import SYSTEM_FOLDERS, PathRule
from reviewtrail.errors import InvalidInputError
from reviewtrail.inputs import INPUT_LIMITS


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("print('a')\n")
    store = project / ".reviewtrail"
    store.mkdir()
    (store / "ledger.sqlite").write_text("ledger")
    key = tmp_path / "keys" / "host.pem"
    key.parent.mkdir()
    key.write_text("PRIVATE KEY")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "b.txt").write_text("b")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.txt").write_text("c")
    return {"project": project, "store": store, "key": key, "extra": extra, "outside": outside}


def rule_of(tree: dict[str, Path]) -> PathRule:
    return PathRule.build([tree["project"], tree["extra"]], [tree["store"], tree["key"], None])


def refused(rule: PathRule, given: str | Path, field: str = "f") -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        rule.resolve(given, field=field)
    assert caught.value.field == field
    assert "not a path this server may use" in str(caught.value) or "must be a path" in str(caught.value)
    return caught.value


def test_paths_inside_a_root_resolve_to_their_real_path(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    assert rule.resolve(tree["project"] / "src" / "a.py", field="f") == (tree["project"] / "src" / "a.py").resolve()
    assert rule.resolve("src/a.py", field="f") == (tree["project"] / "src" / "a.py").resolve()  # the first root
    assert rule.resolve(tree["extra"] / "b.txt", field="f") == (tree["extra"] / "b.txt").resolve()
    assert rule.resolve(tree["project"], field="f") == tree["project"].resolve()  # a root itself
    assert rule.resolve(tree["project"] / "new" / "file", field="f").name == "file"  # need not exist


def test_paths_outside_every_root_are_refused(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    refused(rule, tree["outside"] / "c.txt")
    refused(rule, "../outside/c.txt")
    refused(rule, tree["project"].parent)
    refused(rule, str(tree["project"]) + "-sibling/x")  # a name that only starts like a root
    for blank in ("", "   ", "a\0b"):
        assert str(refused(rule, blank)) == "f: must be a path"


def test_secrets_and_what_lies_inside_them_are_refused(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    refused(rule, tree["store"])
    refused(rule, tree["store"] / "ledger.sqlite")
    refused(rule, ".reviewtrail/ledger.sqlite")
    refused(rule, "src/../.reviewtrail/objects/x")
    inside_key = PathRule.build([tree["key"].parent], [tree["key"]])
    refused(inside_key, tree["key"])
    assert inside_key.resolve(tree["key"].parent / "other.pem", field="f").name == "other.pem"


def test_symlinks_are_followed_before_the_rule(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    (tree["project"] / "out").symlink_to(tree["outside"])
    (tree["project"] / "ledger").symlink_to(tree["store"] / "ledger.sqlite")
    (tree["outside"] / "in").symlink_to(tree["project"] / "src")
    refused(rule, "out/c.txt")
    refused(rule, "ledger")
    assert rule.resolve(tree["outside"] / "in" / "a.py", field="f") == (tree["project"] / "src" / "a.py").resolve()


def test_system_folders_are_never_inside_a_root(tree: dict[str, Path]) -> None:
    everything = PathRule.build([Path("/")], [])
    for folder in SYSTEM_FOLDERS:
        refused(everything, folder / "x")
        refused(everything, folder)
    assert everything.resolve("/etc", field="f") == Path("/etc").resolve()


def test_with_no_root_nothing_relative_resolves(tree: dict[str, Path]) -> None:
    assert str(refused(PathRule.build([], []), "a.py")).startswith("f: a.py is not a path this server may use")
    refused(PathRule.build([], []), tree["project"] / "src" / "a.py")


def test_a_read_gives_the_bytes_of_an_allowed_file(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    assert rule.read("src/a.py", "code", field="file") == b"print('a')\n"
    assert rule.read_text(tree["extra"] / "b.txt", "prompt", field="p") == "b"


def test_a_read_refuses_a_hard_link_to_a_secret(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    os.link(tree["key"], tree["project"] / "innocent.txt")
    with pytest.raises(InvalidInputError, match="not a path this server may use") as caught:
        rule.read("innocent.txt", "code", field="file")
    assert str(caught.value).startswith("file: innocent.txt is not a path this server may use")
    assert "PRIVATE KEY" not in str(caught.value)


def test_a_read_refuses_what_is_not_a_regular_file_or_is_too_large(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    with pytest.raises(InvalidInputError, match="not a regular file"):
        rule.read("src", "code", field="file")
    with pytest.raises(InvalidInputError) as missing:
        rule.read("src/missing.py", "code", field="file")
    assert (missing.value.field, str(missing.value)) == ("file", "file: src/missing.py does not exist")
    big = tree["project"] / "big.pem"
    big.write_bytes(b"k" * (INPUT_LIMITS["key"] + 1))
    with pytest.raises(InvalidInputError) as caught:
        rule.read(big, "key", field="sign-key")
    assert str(caught.value) == f"sign-key: {big} is larger than 65,536 bytes, the most a key file may hold"
    exact = tree["project"] / "exact.pem"
    exact.write_bytes(b"k" * INPUT_LIMITS["key"])
    assert len(rule.read(exact, "key", field="sign-key")) == INPUT_LIMITS["key"]


def test_a_read_as_text_names_the_byte_not_the_bytes(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    (tree["project"] / "bin").write_bytes(b"secret-bytes \xff")
    with pytest.raises(InvalidInputError, match=r"not UTF-8 text \(invalid start byte at byte 13\)") as caught:
        rule.read_text("bin", "prompt", field="prompt_file")
    assert "secret-bytes" not in str(caught.value)


def test_a_read_is_checked_by_what_was_opened(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder swapped for a symlink between the check and the open: the descriptor's own path is
    outside, so the read is refused."""
    rule = rule_of(tree)
    real_open = os.open

    def swapped(path: str | Path, flags: int, *args: int) -> int:
        if str(path).endswith("a.py"):
            return real_open(tree["outside"] / "c.txt", flags, *args)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", swapped)
    with pytest.raises(InvalidInputError, match="not a path this server may use"):
        rule.read("src/a.py", "code", field="file")


SEGMENT = st.sampled_from(["..", ".", "src", "a.py", ".reviewtrail", "ledger.sqlite", "x", "out"])


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(SEGMENT, min_size=1, max_size=6))
def test_whatever_is_named_resolves_inside_a_root_and_outside_every_secret(
    tree: dict[str, Path], parts: list[str]
) -> None:
    rule = rule_of(tree)
    if not (tree["project"] / "out").is_symlink():
        (tree["project"] / "out").symlink_to(tree["outside"])
    given_path = "/".join(parts)
    try:
        real = rule.resolve(given_path, field="f")
    except InvalidInputError:
        real = None
    expected = Path(os.path.realpath(tree["project"] / given_path))
    roots = [tree["project"].resolve(), tree["extra"].resolve()]
    secrets = [tree["store"].resolve(), tree["key"].resolve()]
    allowed = any(expected == r or r in expected.parents for r in roots) and not any(
        expected == s or s in expected.parents for s in secrets
    )
    assert (real is not None) == allowed
    if real is not None:
        assert real == expected


def test_a_refusal_names_the_path_as_given_the_field_and_the_roots(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    error = refused(rule, "../outside/c.txt", field="prompt_file")
    roots = f"{tree['project'].resolve()}, {tree['extra'].resolve()}"
    assert str(error) == (
        "prompt_file: ../outside/c.txt is not a path this server may use: a path must resolve inside the project "
        f"folder or a folder given with --allow-path ({roots}), and never onto the store, a key or a configuration "
        "file of the server"
    )
    no_roots = str(refused(PathRule.build([], []), "/x", field="f"))
    assert no_roots.endswith(
        "--allow-path (none), and never onto the store, a key or a configuration file of the server"
    )
    assert str(refused(rule, " ", field="f")) == "f: must be a path"
    with pytest.raises(InvalidInputError) as caught:
        rule.read(tree["store"] / "ledger.sqlite", "code", field="file")
    assert str(caught.value).startswith(f"file: {tree['store'] / 'ledger.sqlite'} is not a path this server may use")


def test_a_read_names_the_field_of_every_refusal(tree: dict[str, Path]) -> None:
    rule = rule_of(tree)
    (tree["project"] / "loop-a").symlink_to(tree["project"] / "loop-b")
    (tree["project"] / "loop-b").symlink_to(tree["project"] / "loop-a")
    os.mkfifo(tree["project"] / "fifo")  # opened without blocking, then refused
    (tree["project"] / "bin").write_bytes(b"\xff")
    cases = [
        ("loop-a", "code", "f1", "f1: cannot read loop-a: Too many levels of symbolic links"),
        ("fifo", "code", "f2", "f2: fifo is not a regular file"),
        ("src", "code", "f3", "f3: src is not a regular file"),
    ]
    for name, kind, field, message in cases:
        with pytest.raises(InvalidInputError) as caught:
            rule.read(name, kind, field=field)  # type: ignore[arg-type]
        assert (caught.value.field, str(caught.value)) == (field, message)
    with pytest.raises(InvalidInputError) as caught:
        rule.read_text("bin", "prompt", field="f4")
    assert caught.value.field == "f4"


def test_a_read_of_several_chunks_gives_the_bytes_exactly(tree: dict[str, Path]) -> None:
    data = bytes(range(256)) * 6000  # about 1.5 MiB: more than one read
    (tree["project"] / "big.py").write_bytes(data)
    assert rule_of(tree).read("big.py", "code", field="file") == data


def test_every_secret_file_is_known_by_its_inode_whatever_its_place_in_the_list(tree: dict[str, Path]) -> None:
    rule = PathRule.build([tree["project"]], [tree["project"] / "not-yet", tree["key"]])
    os.link(tree["key"], tree["project"] / "copy.pem")
    with pytest.raises(InvalidInputError, match="not a path this server may use"):
        rule.read("copy.pem", "key", field="f")


def test_a_file_with_another_hard_link_is_refused(tree: dict[str, Path]) -> None:
    """A link into a secret folder (the user's configuration, the store) is found by no list of
    inodes, so no file with more than one link is read."""
    rule = rule_of(tree)
    os.link(tree["project"] / "src" / "a.py", tree["project"] / "b.py")
    with pytest.raises(InvalidInputError) as caught:
        rule.read("b.py", "code", field="file")
    assert str(caught.value) == "file: b.py has 2 hard links; a file this server reads must have one"
    with pytest.raises(InvalidInputError, match="2 hard links"), rule.opened("src/a.py", field="f"):
        pass
    (tree["project"] / "b.py").unlink()
    with rule.opened("src/a.py", field="f") as opened:
        assert opened.read_bytes() == b"print('a')\n" and str(opened).startswith("/proc/self/fd/")


def test_a_path_that_cannot_be_followed_is_refused_by_name(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link removed while it is followed makes realpath fail: a refusal, never a crash."""
    rule = rule_of(tree)

    def vanished(path: str | Path) -> str:
        raise FileNotFoundError(2, "No such file or directory", str(path))

    monkeypatch.setattr(os.path, "realpath", vanished)
    error = refused(rule, "src/a.py", field="since")
    assert str(error).startswith("since: src/a.py is not a path this server may use")
