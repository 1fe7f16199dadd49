"""Campaigns on a store: import a campaign file, a campaign's training setting, the campaigns
recorded (docs/human-review.md, "Campaign files" and "Campaign settings")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewtrail._struct import parse
from reviewtrail.canonical import canonical_sha256
from reviewtrail.errors import NotFoundError
from reviewtrail.human_review.campaigns._campaign_file import FileFormat, file_format, parse_campaign_file
from reviewtrail.human_review.reads._campaign_read import latest_settings
from reviewtrail.human_review.records._record_names import ACTOR, prompt_digest
from reviewtrail.human_review.records._records import CampaignSettings, new_campaign_record, new_prompt_record
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

__all__ = [
    "CampaignSummary",
    "ImportResult",
    "ImportedPrompt",
    "SettingsView",
    "campaign_settings",
    "import_campaign",
    "list_campaigns",
    "require_campaign",
]


@dataclass(frozen=True)
class ImportedPrompt:
    """One entry of an imported file: its line, campaign, family, digest, its record id (the new
    one, or the one already recorded) and its prompt's short label (:func:`~._labels.prompt_label`)."""

    line: int
    campaign_id: str
    campaign_version: int
    scenario_family: str
    prompt_digest: str
    record_id: str
    payload_hash: str  # the prompt record's payloadHash: what a context receipt names it by
    prompt_label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "promptLabel": self.prompt_label,
            "campaignId": self.campaign_id,
            "campaignVersion": self.campaign_version,
            "scenarioFamily": self.scenario_family,
            "promptDigest": self.prompt_digest,
            "recordId": self.record_id,
            "payloadHash": self.payload_hash,
        }


@dataclass(frozen=True)
class ImportResult:
    imported: list[ImportedPrompt] = field(default_factory=list)
    already_present: list[ImportedPrompt] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "imported": len(self.imported),
            "alreadyPresent": len(self.already_present),
            "prompts": [p.to_json() | {"status": "imported"} for p in self.imported]
            + [p.to_json() | {"status": "already-present"} for p in self.already_present],
        }


def import_campaign(
    store: Store, text: str, *, name: str = "", fmt: FileFormat | None = None, actor: str = ACTOR
) -> ImportResult:
    """Import a campaign file (``name`` picks the format unless ``fmt`` is given): validate every
    entry first, then append every prompt not recorded yet in one batch. An entry whose prompt
    (same campaign version, payload and privacy) is already recorded, or appears earlier in the
    same file, is reported as already present and not appended again."""
    entries = parse_campaign_file(text, fmt or file_format(name, text))
    result = ImportResult()
    records = []
    seen: dict[str, str] = {}
    for entry in entries:
        record = new_prompt_record(entry.prompt, entry.privacy, actor=actor)
        digest = prompt_digest(record.payload, entry.privacy)
        rows = store.ledger.rows("hr_prompts", prompt_digest=digest)
        known = rows[0]["record_id"] if rows else seen.get(digest)
        campaign = entry.prompt.campaign
        payload_hash = canonical_sha256(record.payload, field="payload")
        info = ImportedPrompt(
            entry.line,
            campaign.id,
            campaign.version,
            entry.prompt.scenario_family,
            digest,
            known or record.id,
            payload_hash,
            prompt_label(entry.prompt.prompt),
        )
        if known is not None:
            result.already_present.append(info)
            continue
        seen[digest] = record.id
        records.append(record)
        result.imported.append(info)
    if records:
        store.append(records)
    return result


@dataclass(frozen=True)
class SettingsView:
    campaign_id: str
    version: int
    training_enabled: bool
    record_id: str | None  # the settings record in force; None while the default applies
    changed: bool  # whether this call appended a settings record
    second_judgment_share: float = 0.0  # the share of items that get a second judgment

    def to_json(self) -> dict[str, Any]:
        return {
            "campaignId": self.campaign_id,
            "version": self.version,
            "trainingEnabled": self.training_enabled,
            "secondJudgmentShare": self.second_judgment_share,
            "recordId": self.record_id,
            "changed": self.changed,
        }


def campaign_settings(
    store: Store,
    campaign_id: str,
    version: int,
    *,
    training: bool | None = None,
    second_judgment_share: float | None = None,
    actor: str = ACTOR,
) -> SettingsView:
    """A campaign version's settings; with ``training`` or ``second_judgment_share`` given, record
    them (superseding the settings in force, keeping what is not given) unless they are already in
    force. Without any record training is disabled and no item gets a second judgment."""
    # The settings in force come from the chain, never from a query-table row that could be stale.
    current = latest_settings(store.ledger, campaign_id, version)
    payload = current.payload_value if current else {}
    enabled = bool(payload.get("trainingEnabled", False))
    share = payload.get("secondJudgmentShare")
    share = float(share) if isinstance(share, int | float) and not isinstance(share, bool) else 0.0
    record_id = current.id if current else None
    want_training = enabled if training is None else training
    want_share = share if second_judgment_share is None else second_judgment_share
    if (training is None and second_judgment_share is None) or (
        current is not None and (enabled, share) == (want_training, want_share)
    ):
        return SettingsView(campaign_id, version, enabled, record_id, changed=False, second_judgment_share=share)
    fields: dict[str, Any] = {"campaignId": campaign_id, "version": version, "trainingEnabled": bool(want_training)}
    if want_share or share:  # absent while no share was ever asked for, as before the field existed
        fields["secondJudgmentShare"] = want_share
    wanted = parse(CampaignSettings, fields, field="campaign")
    [env] = store.append([new_campaign_record(wanted, supersedes=record_id, actor=actor)])
    return SettingsView(campaign_id, version, want_training, env.id, changed=True, second_judgment_share=want_share)


@dataclass(frozen=True)
class CampaignSummary:
    campaign_id: str
    version: int
    label: str | None
    prompts_by_family: dict[str, int]
    training_enabled: bool

    @property
    def prompts(self) -> int:
        return sum(self.prompts_by_family.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "campaignId": self.campaign_id,
            "version": self.version,
            "label": self.label,
            "prompts": self.prompts,
            "promptsByFamily": dict(self.prompts_by_family),
            "trainingEnabled": self.training_enabled,
        }


def list_campaigns(store: Store) -> list[CampaignSummary]:
    """Every campaign version with prompts or settings, ordered by id and version: its label (from
    its first prompt), its prompt count per scenario family, and whether training is enabled."""
    families: dict[tuple[str, int], dict[str, int]] = {}
    labels: dict[tuple[str, int], tuple[int, str]] = {}
    for row in store.ledger.rows("hr_prompts"):
        key = (row["campaign_id"], row["campaign_version"])
        counts = families.setdefault(key, {})
        counts[row["scenario_family"]] = counts.get(row["scenario_family"], 0) + 1
        if key not in labels or row["seq"] < labels[key][0]:
            labels[key] = (row["seq"], row["campaign_label"])
    settings = store.ledger.rows("hr_campaigns")
    training = {(r["campaign_id"], r["version"]): bool(r["training_enabled"]) for r in settings}
    out = []
    for key in sorted(families.keys() | training.keys()):
        label = labels.get(key)
        by_family = dict(sorted(families.get(key, {}).items()))
        out.append(CampaignSummary(key[0], key[1], label[1] if label else None, by_family, training.get(key, False)))
    return out


def require_campaign(ledger: Ledger, campaign_id: str, version: int | None = None) -> None:
    """Refuse a campaign (version) with no imported prompt: :class:`NotFoundError`, field
    ``campaign`` (exit 3). Every command over a campaign checks this first, so a typo never runs,
    exports or records anything for a campaign that does not exist."""
    where: dict[str, Any] = {"campaign_id": campaign_id}
    if version is not None:
        where["campaign_version"] = version
    if not ledger.count("hr_prompts", **where):
        named = f"{campaign_id} v{version}" if version is not None else campaign_id
        raise NotFoundError(f"no review prompts are recorded for campaign {named}", field="campaign")
