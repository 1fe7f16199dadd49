"""Identifiers, Markdown links and provenance chips of the Citation check (see :mod:`._citations`).

Provenance chips (not academic citations; counted in ``stats["provenance_chips"]`` only)
    ``[ev]``, ``[ev1]``, ``[evidence2]``, ``[artifact3]`` (any case), ``[ev:run-1]``, every
    structured tag ``[TYPE:ID]``
    (TYPE a letter then letters/digits/``_``/``-``, ID without spaces or brackets; lists such as
    ``[ev1, ev2]`` too) and tool markers ``【4:0†source】``. ``[TYPE:ID]`` tags are the evidence
    citations of the Claims model, checked by the Computation check. Not chips: a URL in
    brackets (``[https://...]``) and a tag whose ID is a placeholder (``[doi:TBD]``,
    ``[citation:TODO]``), which is a placeholder marker.

Markdown links
    ``[text](url)`` is not a numbered marker (its text is not scanned); an absolute ``http(s)``/``ftp``
    URL, ``doi:``/``www.`` target counts as an inline source and is classified like any other
    identifier. Relative paths and ``mailto:`` are not sources. A fragment link ``[1](#ref-1)``
    keeps its text, so it is the marker ``[1]``. A link whose target is a placeholder (empty,
    ``#``, ``TODO``, ``TBD``, ``url``, ``link``, ``xxx``, ``...``, ``?``, ``https://doi.org/TODO``)
    is a placeholder source.

Identifiers (``stats["identifiers"]``)
    ``doi`` -- ``10.NNNN/...``, ``doi:10...``, ``https://doi.org/10...``; ``arxiv`` --
    ``arXiv:2401.01234v2``, ``arxiv.org/abs/...``, old style ``hep-th/9901001`` (known archive
    names only); ``pmid`` -- ``PMID: 123``, ``pubmed.ncbi.nlm.nih.gov/123``; ``pmc`` --
    ``PMC1234567``, ``PMCID: ...``, NCBI PMC article URLs; ``europepmc`` -- ``europepmc.org/...``,
    ``MED/12345``, ``PPR/...``, ``PMC/PMC...``, ``Europe PMC: PMC123...``/``Europe-PMC: 123...``;
    ``url`` -- any other ``http(s)://``/``www.`` URL.

    An identifier written as a bare URL (``http(s)://``, ``ftp://``, ``www.``) or as a Markdown
    link to a source is also an inline marker (``_Ident.inline``): the reader can follow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from reviewtrail.reviewer._cite_text import _mask

__all__ = ["IDENTIFIER_KINDS"]

_CHIP_ONE = (
    r"(?:(?i:ev|evidence)(?:\d[\w.\-]*|[-_:.][\w.:/\-]+)?|(?i:artifact)\d+"
    r"|(?!(?i:https?|ftp|mailto|www)\b)[A-Za-z][\w\-]{0,40}:"
    r"(?!(?i:todo|tbd|tba|xxx+|\?+|待补充|待定|none|n/a)\])(?!//)[^\s\[\]`]{1,200})"
)
_CHIP = re.compile(rf"\[\s*{_CHIP_ONE}(?:\s*[,;]\s*{_CHIP_ONE})*\s*\](?!\()|【[^】\n]*†[^】\n]*】")

_LINK = re.compile(
    r"(?P<bang>!?)\[(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(?P<target><[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_PLACEHOLDER_TARGETS: Final[frozenset[str]] = frozenset(
    {"", "#", "todo", "tbd", "tba", "url", "link", "...", "…", "?", "??", "???", "none", "null", "placeholder"}
    | {"http://", "https://", "待补充", "链接"}
)


# --------------------------------------------------------------------------------------------
# Identifiers
# --------------------------------------------------------------------------------------------

_URL_EXCLUDED = r"\s<>\"'\[\]{}|\\^`\u3000-\u303f\uff00-\uffef\u4e00-\u9fff"
_URL = re.compile(
    r"(?i)(?<![\w@./])(?:(?:https?|ftp)://|www\.|(?:dx\.)?doi\.org/|arxiv\.org/|europepmc\.org/"
    rf"|pubmed\.ncbi\.nlm\.nih\.gov/)[^{_URL_EXCLUDED}]+"
)
_TRAILING = ".,;:!?*_'\""
_ARXIV_ARCHIVES = (
    "hep-th|hep-ph|hep-ex|hep-lat|gr-qc|astro-ph|cond-mat|quant-ph|math-ph|math|nucl-th|nucl-ex|physics|"
    "nlin|cs|q-bio|q-fin|stat|solv-int|chao-dyn|patt-sol|adap-org|cmp-lg|comp-gas|alg-geom|dg-ga|funct-an|"
    "q-alg|mtrl-th|supr-con|acc-phys|ao-sci|atom-ph|bayes-an|chem-ph|plasm-ph"
)
_ARXIV_ID = rf"(?:\d{{4}}\.\d{{4,5}}|(?:{_ARXIV_ARCHIVES})(?:\.[A-Za-z]{{2}})?/\d{{7}})(?:v\d+)?"
_IDENTIFIER_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("europepmc", re.compile(r"(?i)(?<![\w.])europe[-_\s]?pmc\s*[:：]\s*(?P<id>pmc\d{4,10}|\d{4,9})\b")),
    ("pmc", re.compile(r"(?i)(?<![\w.])pmc\s*id\s*[:：]?\s*(?:pmc)?(?P<id>\d{4,9})\b")),
    ("europepmc", re.compile(r"(?<![\w/])(?P<id>(?:MED|PPR|AGR|CBA|CTX|ETH|HIR|PAT|NBK|PMC)/(?:PMC)?\d{2,12})\b")),
    ("pmc", re.compile(r"(?<![\w/])PMC(?P<id>\d{4,9})\b")),
    ("pmid", re.compile(r"(?i)(?<![\w.])pmid\s*[:：]?\s*(?P<id>\d{1,9})\b")),
    ("arxiv", re.compile(rf"(?i)(?<![\w.])arxiv\s*[:：]?\s*(?P<id>{_ARXIV_ID})(?!\w)")),
    ("arxiv", re.compile(rf"(?<![\w/.\-])(?P<id>(?:{_ARXIV_ARCHIVES})(?:\.[A-Z]{{2}})?/\d{{7}}(?:v\d+)?)(?!\w)")),
    ("doi", re.compile(rf"(?i)(?<![\w./])(?:doi\s*[:：]\s*)?(?P<id>10\.\d{{4,9}}/[^{_URL_EXCLUDED}]+)")),
)
IDENTIFIER_KINDS: Final[tuple[str, ...]] = ("doi", "arxiv", "pmid", "pmc", "europepmc", "url")


def _trim(value: str) -> str:
    """Strip trailing punctuation and unbalanced closing brackets from a URL or DOI."""
    while value:
        last = value[-1]
        if last in _TRAILING or (last == ")" and value.count("(") < value.count(")")):
            value = value[:-1]
        else:
            break
    return value


_VERSION_SUFFIX = re.compile(r"v\d+\Z")


def _normalize_identifier(kind: str, value: str) -> str:
    if kind == "doi":
        return "doi:" + value.lower()
    if kind == "arxiv":
        return "arxiv:" + _VERSION_SUFFIX.sub("", value.lower())
    if kind in {"pmid", "pmc"}:
        return f"{kind}:{int(value)}"
    if kind == "europepmc":
        value = value.upper()
        if "/" not in value:  # from ``Europe PMC: ...``
            value = f"PMC/{value}" if value.startswith("PMC") else f"MED/{value}"
        return "europepmc:" + value
    url = re.sub(r"(?i)^(?:https?|ftp)://", "", value)
    url = re.sub(r"(?i)^www\.", "", url)
    return "url:" + url.rstrip("/").lower()


_DOI_PATH = re.compile(r"10\.\d{4,9}/\S+")
_PLACEHOLDER_SEGMENT = re.compile(r"(?i)(?:^|[/.=])(?:todo|tbd|tba|x{3,}|placeholder|\.\.\.|…)(?:$|[/.?#&])")


def _classify_url(url: str) -> tuple[str, str] | None:
    """(kind, normalized) of a URL; ``("placeholder", url)`` for a placeholder; None for a non-source."""
    bare = re.sub(r"(?i)^(?:https?|ftp)://", "", url)
    host, _, path = bare.partition("/")
    host = host.lower()
    if not host or _PLACEHOLDER_SEGMENT.search(bare) or host in {"todo", "tbd", "url", "link", "placeholder"}:
        return ("placeholder", url)
    if host.endswith("doi.org"):
        doi = re.sub(r"(?i)^doi:", "", path)
        if _DOI_PATH.fullmatch(doi) and "xxx" not in doi.lower():
            return ("doi", _normalize_identifier("doi", doi))
        return ("placeholder", url)
    if host.endswith("arxiv.org"):
        m = re.search(rf"(?:abs|pdf)/(?P<id>{_ARXIV_ID})", path)
        if m:
            return ("arxiv", _normalize_identifier("arxiv", m["id"]))
    if "ncbi.nlm.nih.gov" in host:
        m = re.search(r"(?i)PMC(\d{4,9})", path)
        if m:
            return ("pmc", _normalize_identifier("pmc", m[1]))
        m = re.match(r"(?:pubmed/)?(\d{1,9})\b", path)
        if m and "pubmed" in host + path:
            return ("pmid", _normalize_identifier("pmid", m[1]))
    if host.endswith("europepmc.org"):
        m = re.search(r"(?i)\b(MED|PMC|PPR|AGR|CBA|CTX|ETH|HIR|PAT|NBK)/(\w+)", path)
        if m:
            return ("europepmc", _normalize_identifier("europepmc", f"{m[1]}/{m[2]}"))
    return ("url", _normalize_identifier("url", url))


def _classify_target(target: str) -> tuple[str, str] | None:
    """A link target as a source: (kind, normalized), ``("placeholder", ...)``, or None (not a source)."""
    t = target.strip().strip("<>").strip()
    if t.lower() in _PLACEHOLDER_TARGETS or re.fullmatch(r"(?i)x{3,}|\?+|\.{2,}", t):
        return ("placeholder", t)
    if t.startswith("#"):
        return None
    if re.match(r"(?i)(?:https?|ftp)://|www\.", t):
        return _classify_url(_trim(t))
    m = re.fullmatch(r"(?i)doi:\s*(.+)", t)
    if m:
        doi = m[1]
        if _DOI_PATH.fullmatch(doi) and "xxx" not in doi.lower():
            return ("doi", _normalize_identifier("doi", doi))
        return ("placeholder", t)
    if _DOI_PATH.fullmatch(t):
        return ("doi", _normalize_identifier("doi", t))
    return None


@dataclass(slots=True)
class _Ident:
    kind: str
    norm: str
    start: int
    raw: str
    inline: bool = False  # written as a bare URL or a Markdown link: an inline marker


_BARE_URL = re.compile(r"(?i)(?:https?|ftp)://|www\.")


def _scan_identifiers(text: str, links: list[tuple[int, str, tuple[str, str] | None]]) -> list[_Ident]:
    """Identifiers and source links in ``text`` (placeholders already blanked), by offset."""
    idents: list[_Ident] = []
    spans: list[tuple[int, int]] = []
    for m in _URL.finditer(text):
        raw = _trim(m.group())
        classified = _classify_url(raw)
        spans.append(m.span())
        if classified is not None and classified[0] != "placeholder":
            idents.append(_Ident(classified[0], classified[1], m.start(), raw, bool(_BARE_URL.match(raw))))
    text = _mask(text, spans)
    for kind, pattern in _IDENTIFIER_PATTERNS:
        spans = []
        for m in pattern.finditer(text):
            value = _trim(m["id"]) if kind == "doi" else m["id"]
            idents.append(_Ident(kind, _normalize_identifier(kind, value), m.start(), m.group()))
            spans.append(m.span())
        if spans:
            text = _mask(text, spans)
    for start, raw, classified in links:
        if classified is not None and classified[0] != "placeholder":
            idents.append(_Ident(classified[0], classified[1], start, raw, inline=True))
    idents.sort(key=lambda x: x.start)
    return idents
