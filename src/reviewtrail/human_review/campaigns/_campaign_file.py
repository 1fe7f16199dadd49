"""Campaign files: JSONL or YAML text, one review prompt per entry (docs/human-review.md,
"Campaign files"). Pure: text in, validated entries with their line numbers out, or an
:class:`InvalidInputError` naming the line and the field of the first bad entry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

import yaml

from reviewtrail._struct import parse, words
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns._yaml_marks import Locate, key_lines, nearest, read_yaml
from reviewtrail.human_review.records._records import ReviewPrompt
from reviewtrail.ledger import Privacy

__all__ = ["CampaignEntry", "FileFormat", "file_format", "jsonl_lines", "parse_campaign_file"]


FileFormat = Literal["jsonl", "yaml"]
_PRIVACY: tuple[str, ...] = get_args(Privacy)


@dataclass(frozen=True)
class CampaignEntry:
    """One validated entry: its position (1-based), the line it starts on, and its prompt."""

    index: int
    line: int
    prompt: ReviewPrompt
    privacy: Privacy


class _Bad(Exception):
    def __init__(self, field: str, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem
        self.line = line


def file_format(name: str, text: str) -> FileFormat:
    """The format of a campaign file: by its suffix (``.jsonl``/``.ndjson``, ``.yaml``/``.yml``),
    else JSONL when its first non-blank character opens a JSON object, else YAML."""
    lower = name.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    return "jsonl" if text.lstrip().startswith("{") else "yaml"


def parse_campaign_file(text: str, fmt: FileFormat) -> list[CampaignEntry]:
    """Every entry of a campaign file, validated. The first bad entry raises
    :class:`InvalidInputError` with field ``line N: <field>`` (the field in wire names, e.g.
    ``criterion.id``); nothing is returned for a file with any bad entry. An empty file is refused."""
    raw = _jsonl_entries(text) if fmt == "jsonl" else _yaml_entries(text)
    if not raw:
        raise InvalidInputError("the campaign file holds no entries", field="file")
    return [_entry(index, line, value, locate) for index, (line, value, locate) in enumerate(raw, start=1)]


def _entry(index: int, line: int, value: Any, locate: Locate) -> CampaignEntry:
    try:
        if not isinstance(value, dict):
            raise _Bad("entry", f"an entry must be a mapping, not {type(value).__name__}")
        fields = dict(value)
        privacy = fields.pop("privacy", None)
        if privacy not in _PRIVACY:
            raise _Bad("privacy", f"must be one of {', '.join(_PRIVACY)} (got {privacy!r})", locate.get(("privacy",)))
        try:
            prompt = parse(ReviewPrompt, fields, field="entry")
        except InvalidInputError as exc:
            named = str(exc.field)
            loc = () if named == "entry" else tuple(named.split("."))
            raise _Bad(named, words(exc), nearest(locate, loc)) from None
        if prompt.external_export_eligible and privacy != "public-source":
            raise _Bad(
                "externalExportEligible",
                f"only a public-source prompt may be eligible for external export (privacy is {privacy})",
                locate.get(("externalExportEligible",)),
            )
    except _Bad as bad:
        at = bad.line if bad.line is not None else line
        raise InvalidInputError(f"entry {index}: {bad.problem}", field=f"line {at}: {bad.field}") from None
    return CampaignEntry(index=index, line=line, prompt=prompt, privacy=cast(Privacy, privacy))


def _jsonl_entries(text: str) -> list[tuple[int, Any, Locate]]:
    out: list[tuple[int, Any, Locate]] = []
    for number, line in jsonl_lines(text):
        if not line:
            continue
        try:
            out.append((number, json.loads(line), {}))
        except (ValueError, RecursionError) as exc:
            problem = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise InvalidInputError(
                f"entry {len(out) + 1} is not JSON: {problem}", field=f"line {number}: entry"
            ) from None
    return out


def _yaml_entries(text: str) -> list[tuple[int, Any, Locate]]:
    def build(loader: yaml.SafeLoader, root: yaml.Node) -> list[tuple[int, Any, Locate]]:
        if not isinstance(root, yaml.SequenceNode):
            line = root.start_mark.line + 1
            raise InvalidInputError("a YAML campaign file is a list of entries", field=f"line {line}: file")
        return [(node.start_mark.line + 1, loader.construct_document(node), key_lines(node)) for node in root.value]

    return read_yaml(text, build) or []


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines of a JSONL text, numbered from 1, split at ``\\n`` only (a ``\\r`` before it
    dropped), with JSON's own whitespace stripped: a blank line comes out empty. U+2028, U+2029,
    U+0085 and the other characters Python's ``splitlines`` breaks at are text inside a line, as
    ``json.dumps(..., ensure_ascii=False)`` and our own export write them."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.strip(" \t\r")
