"""Input handling for ``trace save``: prompt/response from flags, files or stdin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reviewtrail.errors import InvalidInputError
from reviewtrail.inputs import read_input

if TYPE_CHECKING:
    from reviewtrail.tracing.files._documents import ReviewCall

__all__ = ["read_prompt", "read_response", "split_files", "warn_claims"]


def read_prompt(text: str | None, path: Path | None) -> str | None:
    if text is not None and path is not None:
        raise InvalidInputError("give --prompt or --prompt-file, not both", field="prompt")
    if path is None:
        return text
    data = read_input(path, "prompt", field="prompt-file", stdin=True)  # a file, or - for stdin
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})", field="prompt-file"
        ) from exc


def read_response(text: str | None, path: Path | None) -> bytes | None:
    """The response's exact bytes."""
    if text is not None and path is not None:
        raise InvalidInputError("give --response or --response-file, not both", field="response")
    if path is not None:
        return read_input(path, "trace-response", field="response-file", stdin=True)
    return text.encode("utf-8") if text is not None else None


def split_files(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in value.replace("\n", ",").split(",") if part.strip())
    return out


def warn_claims(call: ReviewCall, *, identity_flag: bool = False) -> None:
    """A warning on stderr for each declared label the rules contradict (the reference helper's wording)."""
    a = call.assurance()
    derived = {
        "executor_family": (call.declared_executor_family, f"model '{call.executor_model or ''}' derives as "
                            f"'{a.identity.executor_family}'"),
        "reviewer_family": (call.declared_reviewer_family, f"model '{a.identity.reviewer_model or ''}' derives as "
                            f"'{a.identity.model_family}'"),
        "independence_verified": (call.declared_independence_verified, "the rules derive it from the models"),
    }  # fmt: skip
    for name in call.declared_mismatches(a):
        claim, why = derived[name]
        label = name.replace("_", " ").replace(" verified", "")
        print(f"warning: ignoring {label} '{claim}'; {why}", file=sys.stderr)
    if identity_flag:
        print(
            "warning: --identity-validated grants nothing; only --native-evidence validates identity", file=sys.stderr
        )
