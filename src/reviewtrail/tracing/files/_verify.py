"""``trace verify``: every trace file against the shipped JSON Schemas, plus the rules
a schema cannot express (file names agree with contents, response bytes match their
recorded hash, meta mode holds no text, assurance labels follow from the facts)."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from reviewtrail.canonical import loads_document
from reviewtrail.errors import NotFoundError
from reviewtrail.tracing.files._events import EVENTS_LABEL, read_event_lines
from reviewtrail.tracing.files._layout import ARIS_DIR, RUN_ID, events_path, traces_root
from reviewtrail.tracing.files._reader import TraceRun, iter_runs, load_run
from reviewtrail.tracing.rules._assurance import assess

__all__ = ["SCHEMA_FILES", "call_problems", "load_schema", "trace_scope", "verify_traces"]

SCHEMA_FILES = {
    "run.meta": "run.meta.schema.json",
    "request": "request.schema.json",
    "meta": "meta.schema.json",
    "event": "event.schema.json",
}


@cache
def load_schema(kind: str) -> dict[str, Any]:
    text = resources.files("reviewtrail.tracing").joinpath("schemas", SCHEMA_FILES[kind]).read_text(encoding="utf-8")
    doc: dict[str, Any] = loads_document(text)
    return doc


@cache
def _validator(kind: str) -> Any:
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(load_schema(kind), format_checker=FormatChecker())


def _schema_problems(kind: str, doc: Any, where: str) -> list[str]:
    errors = sorted(_validator(kind).iter_errors(doc), key=lambda e: list(e.path))
    return [f"{where}: {'.'.join(str(p) for p in e.path) or '<root>'}: {e.message}" for e in errors]


def _load(path: Path, where: str, problems: list[str]) -> Any:
    try:
        return loads_document(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{where}: missing")
    except (OSError, ValueError) as exc:
        problems.append(f"{where}: not valid JSON ({exc})")
    return None


def _run_problems(run: TraceRun, project: Path) -> list[str]:
    problems: list[str] = []
    rel = run.path.relative_to(project) if run.path.is_relative_to(project) else run.path
    run_meta = _load(run.path / "run.meta.json", f"{rel}/run.meta.json", problems)
    if run_meta is not None:
        problems += _schema_problems("run.meta", run_meta, f"{rel}/run.meta.json")
        if isinstance(run_meta, dict) and (run_meta.get("run_id") != run.run_id or run_meta.get("skill") != run.skill):
            problems.append(f"{rel}/run.meta.json: skill/run_id do not match the folder {run.skill}/{run.run_id}")
    for call in run.calls:
        stem = f"{rel}/{call.files.stem}"
        request = _load(call.files.request, f"{stem}.request.json", problems)
        meta = _load(call.files.meta, f"{stem}.meta.json", problems)
        for kind, doc in (("request", request), ("meta", meta)):
            if doc is None:
                continue
            problems += _schema_problems(kind, doc, f"{stem}.{kind}.json")
            if isinstance(doc, dict) and (doc.get("call_number") != call.number or doc.get("purpose") != call.purpose):
                problems.append(f"{stem}.{kind}.json: call_number/purpose do not match the file name")
        if isinstance(meta, dict):
            problems += _meta_rules(call.files.response, meta, request if isinstance(request, dict) else None, stem)
    return problems


def _meta_rules(response: Path, meta: dict[str, Any], request: dict[str, Any] | None, stem: str) -> list[str]:
    problems: list[str] = []
    mode = meta.get("trace_mode", "full")
    if response.exists():
        if mode == "meta":
            problems.append(f"{stem}.response.md: present in a meta-mode call")
        data = response.read_bytes()
        if meta.get("response_sha256") not in (None, hashlib.sha256(data).hexdigest()):
            problems.append(f"{stem}.response.md: does not match response_sha256 in the meta file")
        if meta.get("response_bytes") not in (None, len(data)):
            problems.append(f"{stem}.response.md: size differs from response_bytes in the meta file")
    elif mode == "full" and meta.get("response_sha256") is not None:
        problems.append(f"{stem}.response.md: missing although the meta file records a response")
    if request is not None and mode == "meta" and "prompt" in request:
        problems.append(f"{stem}.request.json: holds prompt text in a meta-mode call")
    try:
        a = assess(
            executor_model=meta.get("executor_model"),
            requested_reviewer_model=meta.get("requested_reviewer_model"),
            reported_reviewer_model=meta.get("reported_reviewer_model"),
            status=str(meta.get("status", "")),
            review_completed=meta.get("review_completed") is True,
            review_scope_complete=meta.get("review_scope_complete") is True,
            review_positive=meta.get("review_positive") is True,
            identity_validated=meta.get("identity_validated") is True,
            reviewer_kind=str(meta.get("reviewer_kind", "model")),
            backend=meta.get("backend") if isinstance(meta.get("backend"), str) else None,
        )
    except (TypeError, AttributeError):
        return problems
    if meta.get("identity_validated") is True and not meta.get("native_evidence_id"):
        problems.append(f"{stem}.meta.json: identity_validated without the native evidence that validated it")
    # Every label must follow from the recorded facts; a hand-edited label is reported.
    expected = {
        "reviewer_model": a.identity.reviewer_model,
        "reviewer_model_source": a.identity.reviewer_model_source,
        "model_family": a.identity.model_family,
        "review_independence": a.review_independence,
        "acceptance_status": a.acceptance_status,
        "independence_verified": a.independence_verified,
    }
    for key, value in expected.items():
        if key in meta and meta[key] != value:
            problems.append(f"{stem}.meta.json: {key} {meta[key]!r} does not follow from the facts ({value!r})")
    if request is not None:
        for key in ("reviewer_model", "reviewer_model_source", "review_independence", "acceptance_status"):
            if key in request and request[key] != meta.get(key):
                problems.append(f"{stem}: request and meta disagree on {key}")
    return problems


def call_problems(run_path: Path, project: Path, number: int, purpose: str) -> list[str]:
    """The schema and rule problems of one call's files (and of its run's run.meta.json)."""
    stem = f"{number:03d}-{purpose}"
    return [
        p for p in _run_problems(load_run(run_path), project) if f"/{stem}." in p or f"/{stem}:" in p or "run.meta" in p
    ]


def trace_scope(path: Path) -> tuple[Path, str | None, str | None]:
    """(project, skill, run id) named by a project, its ``.aris``, a skill folder or a run folder."""
    path = path.absolute()
    if RUN_ID.fullmatch(path.name) and path.is_dir():
        return path.parent.parent.parent.parent, path.parent.name, path.name
    if path.parent.name == "traces" and path.parent.parent.name == ARIS_DIR:
        return path.parent.parent.parent, path.name, None
    return (path.parent if path.name == ARIS_DIR else path), None, None


def verify_traces(path: Path) -> tuple[int, list[str]]:
    """Check every trace file under ``path`` (a project, its ``.aris``, a skill folder or a run folder).

    Returns (files checked, problems).
    """
    path = path.absolute()
    if not path.exists():
        raise NotFoundError(f"{path} does not exist", field="path")
    project, skill, run_id = trace_scope(path)
    if run_id is not None:
        runs = [load_run(path)]
    elif skill is not None:
        runs = list(iter_runs(project, skill))
    else:
        if not traces_root(project).is_dir() and not events_path(project).exists():
            raise NotFoundError(f"no .aris/traces under {project}", field="path")
        runs = list(iter_runs(project))
    problems: list[str] = []
    checked = 0
    for run in runs:
        checked += 1 + sum(1 + (c.files.meta.exists()) + (c.files.response.exists()) for c in run.calls)
        problems += _run_problems(run, project)
    if events_path(project).exists() and run_id is None:
        checked += 1
        for line in read_event_lines(project):
            where = f"{EVENTS_LABEL} line {line.number}"
            if line.doc is None:
                problems.append(f"{where}: {line.problem}")
            else:
                problems += _schema_problems("event", line.doc, where)
    return checked, problems
