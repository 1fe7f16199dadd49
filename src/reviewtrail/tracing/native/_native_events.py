"""Reading a Copilot session event log: the challenge marker and the native review lifecycle. Pure.

Every function raises ``ValueError`` with the reason when the log does not show what the
evidence claims (see ``_native_evidence`` for the checks).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Lifecycle", "find_lifecycle", "parse_events"]

NONCE_PREFIX = "ARIS_REVIEW_NONCE="


@dataclass(frozen=True)
class Record:
    event: dict[str, Any]
    end: int  # byte offset just after the event's line

    @property
    def kind(self) -> Any:
        return self.event.get("type")

    @property
    def data(self) -> dict[str, Any]:
        data = self.event.get("data")
        return data if isinstance(data, dict) else {}

    @property
    def root(self) -> bool:
        return not self.event.get("agentId")


@dataclass(frozen=True)
class Lifecycle:
    executor_model: Any
    reviewer_model: Any
    response: str


def parse_events(raw: bytes) -> list[Record]:
    records: list[Record] = []
    offset = 0
    for number, line in enumerate(raw.splitlines(keepends=True), start=1):
        offset += len(line)
        payload = line.rstrip(b"\r\n")
        if not payload:
            continue
        try:
            event = json.loads(payload)
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"the session event log has malformed JSON on line {number}") from exc
        if not isinstance(event, dict):
            raise ValueError(f"the session event log has a non-object event on line {number}")
        records.append(Record(event, offset))
    return records


def _session(records: list[Record]) -> tuple[Any, str]:
    starts = [r for r in records if r.kind == "session.start"]
    if len(starts) != 1:
        raise ValueError(f"the session event log has {len(starts)} session.start events, not one")
    context = starts[0].data.get("context")
    cwd = context.get("cwd") if isinstance(context, dict) else None
    if not isinstance(cwd, str) or not cwd:
        raise ValueError("session.start has no context.cwd")
    return starts[0].data.get("sessionId"), str(Path(cwd).resolve())


def _result_text(record: Record) -> str:
    result = record.data.get("result")
    if not isinstance(result, dict):
        return ""
    return "\n".join(v for v in (result.get("content"), result.get("detailedContent")) if isinstance(v, str))


def _check_challenge(doc: dict[str, Any], records: list[Record], marker_schema: str) -> Record:
    starts = [
        r for r in records if r.event.get("id") == doc.get("challenge_event_id") and r.kind == "tool.execution_start"
    ]
    ends = [
        r
        for r in records
        if r.event.get("id") == doc.get("challenge_completion_event_id") and r.kind == "tool.execution_complete"
    ]
    if len(starts) != 1 or len(ends) != 1:
        raise ValueError("the evidence's challenge marker lifecycle is missing or duplicated")
    start, end = starts[0], ends[0]
    marker = json.dumps(
        {"schema": marker_schema, "status": "marker", "binding": doc.get("binding")}, sort_keys=True, ensure_ascii=False
    )
    call = doc.get("challenge_tool_call_id")
    if not (
        start.root
        and end.root
        and start.data.get("toolCallId") == call
        and end.data.get("toolCallId") == call
        and end.data.get("success") is True
        and isinstance(doc.get("binding"), str)
        and marker in _result_text(end)
        and start.data.get("model") == doc.get("executor_model")
        and end.end > start.end
    ):
        raise ValueError("the evidence's challenge marker lifecycle is invalid")
    return end


def _is_invocation(record: Record, nonce: str) -> bool:
    if record.kind != "tool.execution_start" or not record.root:
        return False
    arguments = record.data.get("arguments")
    if not isinstance(arguments, dict):
        return False
    tool = str(record.data.get("toolName") or "").lower().replace("_", "-")
    agent = arguments.get("agent_type", arguments.get("agentType"))
    if not ((tool == "task" and agent == "rubber-duck") or tool in ("rubber-duck", "rubberduck")):
        return False
    prompt = next((v for k in ("prompt", "query", "input") if isinstance(v := arguments.get(k), str)), "")
    return re.search(rf"(?m)^{re.escape(NONCE_PREFIX + nonce)}\s*$", prompt) is not None


def _response(record: Record) -> str:
    result = record.data.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, str) or not content.strip():
        raise ValueError("the native reviewer's tool result has no text")
    detailed = result.get("detailedContent") if isinstance(result, dict) else None
    if (
        isinstance(detailed, str)
        and len(detailed) >= len(content)
        and "(Full response provided to agent)" not in detailed
    ):
        return detailed
    return content


def find_lifecycle(doc: dict[str, Any], prefix: bytes, *, marker_schema: str) -> Lifecycle:
    """The native review the evidence names, read from the bound prefix of its session log."""
    records = parse_events(prefix)
    session_id, cwd = _session(records)
    if session_id != doc.get("session_id") or cwd != str(Path(str(doc.get("cwd") or "")).resolve()):
        raise ValueError("the evidence's session id or cwd differs from its session log")
    challenge_end = _check_challenge(doc, records, marker_schema)
    call, nonce = doc.get("tool_call_id"), doc.get("nonce")
    if not isinstance(call, str) or not isinstance(nonce, str) or not call or not nonce:
        raise ValueError("the evidence has no tool_call_id or nonce")
    of_call = [r for r in records if r.data.get("toolCallId") == call]
    invocations = [r for r in of_call if _is_invocation(r, nonce)]
    starts = [r for r in of_call if r.kind == "subagent.started"]
    completions = [r for r in of_call if r.kind == "subagent.completed"]
    tool_ends = [r for r in of_call if r.kind == "tool.execution_complete"]
    if not len(invocations) == len(starts) == len(completions) == len(tool_ends) == 1:
        raise ValueError("the evidence's review lifecycle events are missing or duplicated")
    if any(r.kind == "subagent.failed" for r in of_call):
        raise ValueError("the evidence holds a failed native reviewer lifecycle")
    invocation, start, done, tool_end = invocations[0], starts[0], completions[0], tool_ends[0]
    if start.data.get("agentName") != "rubber-duck" or done.data.get("agentName") != "rubber-duck":
        raise ValueError("the review lifecycle is not the rubber-duck subagent's")
    if start.event.get("agentId") != call or done.event.get("agentId") != call:
        raise ValueError("the review lifecycle is not bound to its child agent id")
    if not challenge_end.end < invocation.end < start.end <= done.end < tool_end.end:
        raise ValueError("the review lifecycle events are out of order")
    if tool_end.data.get("success") is not True:
        raise ValueError("the native reviewer's tool call did not succeed")
    executor = invocation.data.get("model")
    reviewer = done.data.get("model") or start.data.get("model")
    if start.data.get("model") not in (None, "", reviewer):
        raise ValueError("the reviewer model changed within its lifecycle")
    if tool_end.data.get("model") not in (None, "", executor):
        raise ValueError("the executor model changed before the tool call completed")
    return Lifecycle(executor, reviewer, _response(tool_end))
