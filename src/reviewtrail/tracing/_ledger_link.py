"""Recording traces in a reviewtrail store (when one exists): bytes in the CAS, a ledger record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["TRACE_RECORD_TYPE", "record_in_store"]

TRACE_RECORD_TYPE = "trace.review-call@1"


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
) -> str | None:
    """Append a ``trace.review-call@1`` record to the store configured for ``project``; its id, or None.

    In ``full`` mode the prompt and response bytes go to the ``agent-state`` pool and the
    record points at them; in ``meta`` mode only their hashes and lengths are recorded.
    """
    from reviewtrail.config import load_settings

    settings = load_settings(cwd=project)
    if not settings.store_exists:
        return None
    from reviewtrail.ledger import NewRecord
    from reviewtrail.store import Store

    with Store.open(settings) as store:
        payload: dict[str, Any] = {"skill": skill, "run_id": run_id, "trace_path": trace_path, "meta": meta}
        if mode == "full":
            if prompt is not None:
                payload["prompt"] = store.cas.put(
                    prompt.encode("utf-8"), pool="agent-state", media_type="text/plain"
                ).to_json()
            if response is not None:
                payload["response"] = store.cas.put(response, pool="agent-state", media_type="text/markdown").to_json()
        record = NewRecord.make(
            type=TRACE_RECORD_TYPE,
            actor=actor,
            privacy="private",
            subject=f"trace:{skill}/{run_id}",
            payload=payload,
        )
        [env] = store.append([record])
        return env.id
