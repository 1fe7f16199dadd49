"""Recording traces in a reviewtrail store (when one exists): bytes in the CAS, a ledger record.

A ``trace.review-call@1`` payload holds ``skill``, ``run_id``, ``trace_path``, ``meta`` (the
meta file's document), in full mode ``prompt`` and ``response`` (CAS references into the
``agent-state`` pool), and, in records written since file digests were added (all optional,
so older records stay valid):

- ``files``: ``{name: {"sha256": hex, "size": n}}`` of the exact bytes of every file the save
  wrote in the run folder (``run.meta.json`` only for the call that created the run);
- ``event``: ``{"sha256": hex, "size": n}`` of the call's ``events.jsonl`` line, without its newline;
- ``recovered``: ``true`` when ``repair_trace_links`` wrote the record for an interrupted save.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["TRACE_RECORD_TYPE", "append_trace_record", "digest_doc", "record_in_store", "store_exists_for"]

TRACE_RECORD_TYPE = "trace.review-call@1"


def store_exists_for(project: Path) -> bool:
    """Whether a reviewtrail store is configured, and initialised, for ``project``."""
    from reviewtrail.config import load_settings

    return load_settings(cwd=project).store_exists


def digest_doc(value: tuple[str, int]) -> dict[str, Any]:
    return {"sha256": value[0], "size": value[1]}


def append_trace_record(
    store: Store,
    *,
    skill: str,
    run_id: str,
    trace_path: str,
    prompt: str | None,
    response: bytes | None,
    meta: dict[str, Any],
    mode: str,
    actor: str,
    files: Mapping[str, tuple[str, int]] | None = None,
    event: tuple[str, int] | None = None,
    recovered: bool = False,
) -> str:
    """Append one ``trace.review-call@1`` record to an open store; its id."""
    from reviewtrail.ledger import NewRecord

    payload: dict[str, Any] = {"skill": skill, "run_id": run_id, "trace_path": trace_path, "meta": meta}
    if mode == "full":
        if prompt is not None:
            payload["prompt"] = store.cas.put(
                prompt.encode("utf-8"), pool="agent-state", media_type="text/plain"
            ).to_json()
        if response is not None:
            payload["response"] = store.cas.put(response, pool="agent-state", media_type="text/markdown").to_json()
    if files is not None:
        payload["files"] = {name: digest_doc(files[name]) for name in sorted(files)}
    if event is not None:
        payload["event"] = digest_doc(event)
    if recovered:
        payload["recovered"] = True
    record = NewRecord.make(
        type=TRACE_RECORD_TYPE,
        actor=actor,
        privacy="private",
        subject=f"trace:{skill}/{run_id}",
        payload=payload,
    )
    [env] = store.append([record])
    return env.id


def record_in_store(
    project: Path,
    *,
    skill: str,
    run_id: str,
    trace_path: str,
    prompt: str | None,
    response: bytes | None,
    meta: dict[str, Any],
    mode: str,
    actor: str,
    files: Mapping[str, tuple[str, int]] | None = None,
    event: tuple[str, int] | None = None,
) -> str | None:
    """Append a ``trace.review-call@1`` record to the store configured for ``project``; its id, or None.

    In ``full`` mode the prompt and response bytes go to the ``agent-state`` pool and the
    record points at them; in ``meta`` mode only their hashes and lengths are recorded.
    """
    from reviewtrail.config import load_settings

    settings = load_settings(cwd=project)
    if not settings.store_exists:
        return None
    from reviewtrail.store import Store

    with Store.open(settings) as store:
        return append_trace_record(
            store,
            skill=skill,
            run_id=run_id,
            trace_path=trace_path,
            prompt=prompt,
            response=response,
            meta=meta,
            mode=mode,
            actor=actor,
            files=files,
            event=event,
        )
