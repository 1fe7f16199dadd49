"""Claims and evidence: claims extracted from replies, de-duplicated evidence items, links.

Public API::

    from reviewtrail.evidence import extract_claims, record_claims, add_evidence, link_evidence
"""

from reviewtrail.evidence._aliases import alias_maps_for, chain_problem, chip_citation, parse_aliases, record_alias_map
from reviewtrail.evidence._claims import (
    Citation,
    ExtractedClaim,
    NumericClaim,
    chip_aliases,
    citation_tokens,
    extract_claims,
    numeric_claims,
    split_sentences,
)
from reviewtrail.evidence._evidence import (
    RecordedClaims,
    add_evidence,
    check_pdf,
    claims_for,
    full_text_retrieved,
    get_claim,
    get_evidence,
    link_evidence,
    links_of,
    parse_origin,
    record_claims,
    record_pdf_extraction,
    resolve_citation,
)
from reviewtrail.evidence._origin_request import EvidenceRequest, record_evidence, record_reply_claims
from reviewtrail.evidence._records import (
    PROJECTIONS,
    RECORD_TYPES,
    RELATIONS,
    AliasMap,
    Claim,
    ClaimCitation,
    EvidenceItem,
    EvidenceLink,
    PdfExtraction,
)

__all__ = [
    "PROJECTIONS",
    "RECORD_TYPES",
    "RELATIONS",
    "AliasMap",
    "Citation",
    "Claim",
    "ClaimCitation",
    "EvidenceItem",
    "EvidenceLink",
    "EvidenceRequest",
    "ExtractedClaim",
    "NumericClaim",
    "PdfExtraction",
    "RecordedClaims",
    "add_evidence",
    "alias_maps_for",
    "chain_problem",
    "check_pdf",
    "chip_aliases",
    "chip_citation",
    "citation_tokens",
    "claims_for",
    "extract_claims",
    "full_text_retrieved",
    "get_claim",
    "get_evidence",
    "link_evidence",
    "links_of",
    "numeric_claims",
    "parse_aliases",
    "parse_origin",
    "record_alias_map",
    "record_claims",
    "record_evidence",
    "record_pdf_extraction",
    "record_reply_claims",
    "resolve_citation",
    "split_sentences",
]
