"""Claims and evidence: claims extracted from replies, de-duplicated evidence items, links.

Public API::

    from reviewtrail.evidence import extract_claims, record_claims, add_evidence, link_evidence
"""

import typing

from reviewtrail import _face

# Each name loads on first use: the composition root reads the record types and query tables alone.
if typing.TYPE_CHECKING:
    from reviewtrail.evidence._aliases import alias_maps_for as alias_maps_for
    from reviewtrail.evidence._aliases import chain_problem as chain_problem
    from reviewtrail.evidence._aliases import chip_citation as chip_citation
    from reviewtrail.evidence._aliases import parse_aliases as parse_aliases
    from reviewtrail.evidence._aliases import record_alias_map as record_alias_map
    from reviewtrail.evidence._claims import Citation as Citation
    from reviewtrail.evidence._claims import ExtractedClaim as ExtractedClaim
    from reviewtrail.evidence._claims import NumericClaim as NumericClaim
    from reviewtrail.evidence._claims import chip_aliases as chip_aliases
    from reviewtrail.evidence._claims import citation_tokens as citation_tokens
    from reviewtrail.evidence._claims import extract_claims as extract_claims
    from reviewtrail.evidence._claims import numeric_claims as numeric_claims
    from reviewtrail.evidence._claims import split_sentences as split_sentences
    from reviewtrail.evidence._evidence import RecordedClaims as RecordedClaims
    from reviewtrail.evidence._evidence import add_evidence as add_evidence
    from reviewtrail.evidence._evidence import check_pdf as check_pdf
    from reviewtrail.evidence._evidence import claims_for as claims_for
    from reviewtrail.evidence._evidence import full_text_retrieved as full_text_retrieved
    from reviewtrail.evidence._evidence import get_claim as get_claim
    from reviewtrail.evidence._evidence import get_evidence as get_evidence
    from reviewtrail.evidence._evidence import link_evidence as link_evidence
    from reviewtrail.evidence._evidence import links_of as links_of
    from reviewtrail.evidence._evidence import parse_origin as parse_origin
    from reviewtrail.evidence._evidence import record_claims as record_claims
    from reviewtrail.evidence._evidence import record_pdf_extraction as record_pdf_extraction
    from reviewtrail.evidence._evidence import resolve_citation as resolve_citation
    from reviewtrail.evidence._origin_request import EvidenceRequest as EvidenceRequest
    from reviewtrail.evidence._origin_request import record_evidence as record_evidence
    from reviewtrail.evidence._origin_request import record_reply_claims as record_reply_claims
    from reviewtrail.evidence._records import RECORD_TYPES as RECORD_TYPES
    from reviewtrail.evidence._records import RELATIONS as RELATIONS
    from reviewtrail.evidence._records import AliasMap as AliasMap
    from reviewtrail.evidence._records import Claim as Claim
    from reviewtrail.evidence._records import ClaimCitation as ClaimCitation
    from reviewtrail.evidence._records import EvidenceItem as EvidenceItem
    from reviewtrail.evidence._records import EvidenceLink as EvidenceLink
    from reviewtrail.evidence._records import PdfExtraction as PdfExtraction
    from reviewtrail.evidence.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.evidence.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
else:
    __getattr__, __dir__ = _face.lazy(__name__)
