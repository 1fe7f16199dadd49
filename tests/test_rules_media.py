"""Media types (reviewtrail.media): one module for the type a file gets and the kind a type is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail import media
from reviewtrail.media import (
    DEFAULT_MEDIA_TYPE,
    JSON_MEDIA_TYPES,
    NARRATIVE_MEDIA_TYPES,
    SUFFIX_MEDIA_TYPES,
    media_essence,
    media_kind,
    media_type_for,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("report.md", "text/markdown"),
        ("sub/dir/REPORT.MD", "text/markdown"),
        ("a.tar.json", "application/json"),
        ("notes.txt", "text/plain"),
        ("paper.tex", "application/x-tex"),
        ("conf.yml", "application/yaml"),
        ("table.tsv", "text/tab-separated-values"),
        ("image.png", "application/octet-stream"),
        ("Makefile", "application/octet-stream"),
        (".md", "application/octet-stream"),  # a dot file has no suffix
    ],
)
def test_a_files_media_type_comes_from_its_suffix(path: str, expected: str) -> None:
    assert media_type_for(path) == expected


@given(st.sampled_from(sorted(SUFFIX_MEDIA_TYPES)), st.text(alphabet="ab/_-", min_size=1, max_size=6))
def test_every_known_suffix_maps_in_any_case(suffix: str, stem: str) -> None:
    name = stem.rstrip("/") or "x"
    assert media_type_for(name + suffix.upper()) == SUFFIX_MEDIA_TYPES[suffix]
    assert media_type_for(name + suffix + ".bak") == DEFAULT_MEDIA_TYPE


_TYPES = st.sampled_from(
    [*sorted(NARRATIVE_MEDIA_TYPES), *sorted(JSON_MEDIA_TYPES), "application/ld+json", "text/csv", "image/png",
     "text/x-markdown", "application/jsonx", "text/json+x"]
)  # fmt: skip


@given(_TYPES, st.sampled_from(["", "; charset=utf-8", ";q=1"]), st.booleans(), st.sampled_from(["", " "]))
def test_the_kind_ignores_parameters_case_and_spaces(essence: str, params: str, upper: bool, pad: str) -> None:
    written = pad + (essence.upper() if upper else essence) + params
    assert media_essence(written) == essence
    expected = (
        "narrative"
        if essence in NARRATIVE_MEDIA_TYPES
        else "json"
        if essence in JSON_MEDIA_TYPES or (essence.startswith("application/") and essence.endswith("+json"))
        else "other"
    )
    assert media_kind(written) == expected


def test_the_kinds_at_their_edges() -> None:
    assert media_kind("application/ld+json") == "json"
    assert media_kind("text/json+x") == "other" and media_kind("application/jsonx") == "other"
    assert media_kind("text/x-markdown") == "other"  # not narrative: only the four listed types are
    assert {"text/markdown", "text/plain", "text/html", "application/x-tex"} == NARRATIVE_MEDIA_TYPES


def test_provenance_and_the_reviewer_use_this_one_module() -> None:
    from reviewtrail.provenance.runs import _runs
    from reviewtrail.reviewer import _computation, _specialist
    from reviewtrail.reviewer import _media as reviewer_media

    assert _runs.media_type_for is media.media_type_for
    assert _computation.media_kind is media.media_kind and _specialist.media_kind is media.media_kind
    for module in (_computation, _specialist, reviewer_media):  # no second list of narrative types
        assert not hasattr(module, "NARRATIVE_MEDIA_TYPES")
