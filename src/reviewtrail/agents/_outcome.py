"""Tool results: what a reviewtrail command prints with ``--json``, and its errors.

A reviewtrail error becomes a tool error (``isError``) whose text is the command's message and
whose structured content is the command's ``--json`` error document: ``{"error": {"type",
"field", "message", "exitCode"}}``, the exit code being the one the command would exit with
(README, "Exit codes"). An argument the tool's input schema refuses is reported the same way, as
an :class:`~reviewtrail.errors.InvalidInputError` (exit 2) naming the argument. An outcome the
command reports with a non-zero exit but still prints (``verify`` finding problems: 4; ``run``
whose code failed: 7) is a tool error too, its structured content the command's JSON.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from reviewtrail.errors import EXIT_INVALID, ReviewtrailError

__all__ = ["EXIT_META", "error_doc", "error_result", "failed_outcome", "invalid_arguments", "outcome_once"]

# The ``_meta`` key of a tool error that carries the command's exit code.
EXIT_META = "reviewtrail/exitCode"


def error_doc(kind: str, message: str, code: int, field: str | None) -> dict[str, Any]:
    """The command's ``--json`` error document."""
    return {"error": {"type": kind, "field": field, "message": message, "exitCode": code}}


def _error(kind: str, message: str, code: int, field: str | None) -> CallToolResult:
    where = f", field {field}" if field else ""
    return CallToolResult(
        content=[TextContent(type="text", text=f"error: {message} ({kind}, exit code {code}{where})")],
        structured_content=error_doc(kind, message, code, field),
        is_error=True,
        meta={EXIT_META: code},
    )


def error_result(exc: ReviewtrailError) -> CallToolResult:
    """The tool error of a reviewtrail error: its message, field and exit code."""
    return _error(type(exc).__name__, str(exc), exc.exit_code, exc.field)


_UNKNOWN = "is not an argument of this tool (its input schema lists every argument it takes)"


def invalid_arguments(exc: ValidationError) -> CallToolResult:
    """The tool error of arguments the input schema refuses: exit 2, naming the first argument
    that is wrong, an unknown one included (every problem is in the message; never the value)."""
    problems = exc.errors(include_url=False, include_input=False)
    fields = [".".join(str(part) for part in problem["loc"]) for problem in problems]
    message = "; ".join(
        f"{name}: {_UNKNOWN if problem['type'] == 'extra_forbidden' else problem['msg']}"
        for name, problem in zip(fields, problems, strict=True)
    )
    return _error("InvalidInputError", message, EXIT_INVALID, fields[0] if fields else None)


def failed_outcome(doc: dict[str, Any], code: int, summary: str, *, once: bool = False) -> CallToolResult:
    """An outcome the command prints and then exits ``code`` with (not 0). ``once``: the text is
    the summary alone and the document is only the structured content (a result that carries
    output carries it once)."""
    text = f"{summary} (exit code {code})" if once else f"{summary} (exit code {code})\n{json.dumps(doc, indent=2)}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=doc, is_error=True, meta={EXIT_META: code}
    )


def outcome_once(doc: dict[str, Any], summary: str) -> CallToolResult:
    """A successful result whose document is carried once: as the structured content, with a
    one-line summary as its text (the SDK would repeat the whole document as text)."""
    return CallToolResult(content=[TextContent(type="text", text=summary)], structured_content=doc)
