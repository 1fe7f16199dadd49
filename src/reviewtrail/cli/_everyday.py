"""What the everyday commands do, apart from their parsing: ``ledger tail``, ``cas put``, ``cas cat``,
``trace save`` and ``review queue``.

The typer commands (``store._ledger``, ``store._cas``, ``trace._trace``, ``review._decide``) and the
fast path (:mod:`reviewtrail.cli._fast`) both call these, so a command prints, fails and exits the
same whichever parsed it. Nothing here imports typer or rich (a table to a terminal draws with rich).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.cli._output import handle_errors, print_json, table
from reviewtrail.cli._progress import byte_progress

if TYPE_CHECKING:
    from reviewtrail.human_review.session import QueueCard
    from reviewtrail.store import Store

__all__ = [
    "TRUSTED_KEYS_HELP",
    "cas_cat",
    "cas_put",
    "ledger_tail",
    "review_queue",
    "trace_env",
    "trace_save",
    "trusted_store",
]

#: The help of ``--trusted-keys`` on every command that gates (export, coverage, standings, queue,
#: decide, history).
TRUSTED_KEYS_HELP = (
    "PEM public keys of the trusted writers (concatenated): every record read must be signed by one, as "
    "'verify --trusted-keys' holds records (else exit 4, naming the record; a malformed file is exit 2)."
)


@contextlib.contextmanager
def trusted_store(trusted_keys: Path | None) -> Iterator[Store]:
    """The configured store, its reads held to ``trusted_keys`` (a trusted-keys file, read first:
    malformed, exit 2 before the store is opened) when given; without it, to the store's own
    key records, as every checked read is."""
    from reviewtrail.app import open_store
    from reviewtrail.ledger import load_trusted_keys, signed_reads

    trusted = load_trusted_keys(trusted_keys) if trusted_keys is not None else None
    with open_store() as store, signed_reads(store.ledger, trusted):
        yield store


@handle_errors
def ledger_tail(*, n: int, type: str | None, subject: str | None, as_json: bool) -> None:
    from reviewtrail.app import open_store

    with open_store() as store:
        records = store.ledger.tail(n, type=type, subject=subject)
    if as_json:
        print_json([r.to_json() for r in records])
        return
    if not records:
        print("no records")
        return
    table(
        "ledger",
        ["seq", "time", "type", "actor", "privacy", "subject", "hash"],
        [
            [str(r.seq), r.time[:19].replace("T", " "), r.type, r.actor, r.privacy, r.subject or "", r.hash[:12]]
            for r in records
        ],
        no_wrap=("seq", "time", "type", "hash"),
    )


@handle_errors
def cas_put(*, files: list[Path], pool: str, media_type: str, as_json: bool, progress: bool | None) -> None:
    from reviewtrail.app import open_store

    size = sum(f.stat().st_size for f in files if f.is_file())
    with open_store() as store, byte_progress(f"storing {_files_label(files)}", size, progress) as on_bytes:
        refs = store.cas.put_files(files, pool=pool, media_type=media_type, on_bytes=on_bytes)  # type: ignore[arg-type]
    if as_json:
        print_json(refs[0].to_json() if len(refs) == 1 else [ref.to_json() for ref in refs])
        return
    for ref in refs:
        print(f"{ref.digest} {ref.size} {ref.pool} {ref.media_type}")


def _files_label(files: list[Path]) -> str:
    return files[0].name if len(files) == 1 else f"{len(files)} files"


@handle_errors
def cas_cat(*, hashes: list[str], out: Path | None, out_dir: Path | None, progress: bool | None) -> None:
    from reviewtrail.app import open_store
    from reviewtrail.cas import locate_object, parse_address, save_many, save_verified, write_verified
    from reviewtrail.errors import InvalidInputError

    if out is not None and (out_dir is not None or len(hashes) > 1):
        raise InvalidInputError("names the file of one object: give several to --out-dir instead", field="out")
    if out is None and out_dir is None and len(hashes) > 1:
        raise InvalidInputError("several objects are written to files: give --out-dir", field="out_dir")
    hexes = [parse_address(address, field="hash") for address in hashes]  # all before anything is read
    with open_store() as store:
        for target, field in ((out, "out"), (out_dir, "out_dir")):
            if target is not None:
                store.refuse_inside(target, field=field)
        if out_dir is not None:
            _print_saved(save_many(store.cas, hexes, out_dir))
            return
        size = locate_object(store.cas, hashes[0]).size
        if out is not None:
            with byte_progress("downloading and verifying", size, progress) as on_bytes:
                save_verified(store.cas, hexes[0], out, on_bytes=on_bytes)
            print(f"{_digest(hexes[0])} {out}")
            return
        with byte_progress("verifying, then writing", 2 * size if size else None, progress) as on_bytes:
            write_verified(store.cas, hashes[0], sys.stdout.buffer, on_bytes=on_bytes)


def _print_saved(saved: list[Path | Exception]) -> None:
    """A line per object written; then the first failure raised (the others written all the same)."""
    for path in saved:
        if isinstance(path, Path):
            print(f"{_digest(path.name)} {path}")
    failed = [e for e in saved if isinstance(e, Exception)]
    if failed:
        raise failed[0]


def _digest(hexdigest: str) -> str:
    return f"sha256:{hexdigest}"


@handle_errors
def trace_save(*, options: dict[str, Any], as_json: bool) -> None:
    """``options``: every option of ``trace save`` but ``--json``, by parameter name."""
    from reviewtrail.app import ProjectStores
    from reviewtrail.tracing.commands import save_trace, trace_save_request

    result = save_trace(trace_save_request(options), env=trace_env(), store=ProjectStores())
    if as_json:
        print_json(result.to_json())
    elif result.mode == "off":
        print("trace mode off: nothing written")
    else:
        print(f"{result.run_path}/{result.meta_path.name if result.meta_path else ''} ({result.acceptance_status})")


def trace_env() -> dict[str, str]:
    """The trace settings of the environment (ARIS_TRACE_*, ARIS_REPO, HOME), by variable name."""
    import os

    from reviewtrail.config import trace_settings

    return trace_settings(os.environ).environ()


@handle_errors
def review_queue(
    *,
    campaign: str | None,
    version: int | None,
    limit: int,
    as_json: bool,
    trusted_keys: Path | None = None,
    reviewer: str | None = None,
) -> None:
    from reviewtrail.human_review.rules import check_reviewer_id
    from reviewtrail.human_review.session import review_queue

    who = check_reviewer_id(reviewer) if reviewer else None  # blank is not given
    with trusted_store(trusted_keys) as store:
        cards = review_queue(store, campaign, version, limit=limit, reviewer=who)
    if as_json:
        print_json([c.to_json() for c in cards])
        return
    if not cards:
        print("no review items")
        return
    for card in cards:
        _print_card(card)


def _print_card(card: QueueCard) -> None:
    state = "decided" if card.decided else "open"
    print(f"== item {card.item_id} ({card.campaign_id} v{card.campaign_version}, {card.scenario_family}; {state})")
    print(f"criterion: {card.criterion['label']} ({card.criterion['id']}@{card.criterion['version']})")
    print(f"  {card.criterion['instructions']}")
    print(f"prompt:\n{card.prompt}")
    if card.evidence is not None:
        print(f"evidence:\n{card.evidence}")
    if not card.valid:
        print("INVALID (responses withheld): " + "; ".join(card.problems))
    else:
        for candidate in card.candidates:
            print(f"--- {candidate.position}\n{candidate.response}")
    print()
