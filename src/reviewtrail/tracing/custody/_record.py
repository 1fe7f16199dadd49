"""Record reviewer calls: one function, a context manager and a decorator.

The trace settings (``ARIS_TRACE_MODE``, ``ARIS_TRACE_RUN_ID``, ``ARIS_TRACE_RUN_IDLE_MINUTES``)
come from the caller as ``env``, by variable name (see :meth:`reviewtrail.config.TraceSettings.environ`);
nothing here reads the process environment. A call is recorded in the ledger when the caller
passes the open ``store`` it belongs to, or a :class:`StoreLocator` that finds the project's
store before anything is written and opens it when the run and call number are chosen, to
record that the save began before its first file (the command line passes
:class:`reviewtrail.app.ProjectStores`). A store that cannot be opened then does not stop the
files from being written; the error is raised once they are safe.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import msgspec

from reviewtrail.errors import ReadOnlyStoreError, ReviewtrailError
from reviewtrail.tracing.custody._ledger_link import StoreLocator
from reviewtrail.tracing.files._documents import (
    ReviewCall,
    TraceMode,
    build_event,
    build_meta,
    build_request,
    build_run_meta,
)
from reviewtrail.tracing.files._event_log import append_event
from reviewtrail.tracing.files._layout import check_run_id, existing_project_root, skill_dir
from reviewtrail.tracing.files._modes import resolve_mode
from reviewtrail.tracing.files._pending import PendingMarker
from reviewtrail.tracing.files._writer import RunSlot, allocate_and_write, digest, idle_window, local_today
from reviewtrail.tracing.rules._assurance import Assurance

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["TraceResult", "record_call", "trace_review", "traced_review"]

P = ParamSpec("P")
R = TypeVar("R")


class TraceResult(msgspec.Struct, frozen=True):
    """Where a call was written (all ``None`` in ``off`` mode) and its labels."""

    mode: TraceMode
    run_id: str | None = None
    call_number: int | None = None
    run_path: Path | None = None
    request_path: Path | None = None
    response_path: Path | None = None
    meta_path: Path | None = None
    acceptance_status: str | None = None
    review_independence: str | None = None
    ledger_record_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "run_id": self.run_id,
            "call_number": self.call_number,
            "run_path": str(self.run_path) if self.run_path else None,
            "request_path": str(self.request_path) if self.request_path else None,
            "response_path": str(self.response_path) if self.response_path else None,
            "meta_path": str(self.meta_path) if self.meta_path else None,
            "acceptance_status": self.acceptance_status,
            "review_independence": self.review_independence,
            "ledger_record_id": self.ledger_record_id,
        }


def _project(project_dir: str | Path | None) -> Path:
    """The project root; an explicit one must be an existing folder (nothing is created for it)."""
    return existing_project_root(project_dir)


class _SaveLink:
    """A save recorded in a store: its pending marker, and its ``trace.save-begun@1`` record,
    appended at the first claim (the run and call number are chosen, no file written yet). The
    store is opened then (a locator's, kept open for the call's record). When the store cannot
    take it, the call's files are still written, but the save is not one repair will complete."""

    def __init__(
        self, project: Path, call: ReviewCall, marker: PendingMarker, store: Store | StoreLocator | None
    ) -> None:
        self.project, self.call, self.marker, self._store = project, call, marker, store
        self._opened: Store | None = None
        self._owned = False
        self._failure: ReviewtrailError | None = None
        self.begun = False

    def claim(self, run_id: str, number: int, created: bool) -> None:
        self.marker.claim(run_id, number, created)
        if self.begun or self._failure is not None:
            return
        from reviewtrail.tracing.custody._ledger_link import append_save_begun

        try:
            append_save_begun(
                self._open(),
                save=self.marker.save,
                skill=self.call.skill,
                purpose=self.call.purpose,
                actor=self.call.executor or "unknown-executor",
            )
        except ReviewtrailError as exc:
            self._failure = exc  # the trace is still written; the error is raised once it is safe
        else:
            self.begun = True

    def refuse_read_only(self) -> None:
        """Before anything is written: a read-only store cannot record the call, so the save writes
        nothing, trace files included (:class:`ReadOnlyStoreError`, exit 5). A store that cannot be
        opened is reported once the trace is safe, as when the save begins."""
        try:
            store = self._open()
        except ReadOnlyStoreError:
            raise
        except ReviewtrailError as exc:
            self._failure = exc
            return
        if store.read_only:
            raise ReadOnlyStoreError(
                "the store is read-only (no write access to its ledger): the call was not saved and no trace "
                "file was written",
                field="store",
            )

    def _open(self) -> Store:
        from reviewtrail.store import Store

        if self._opened is None:
            if isinstance(self._store, Store):
                self._opened = self._store
            elif self._store is not None:
                self._opened, self._owned = self._store.open(self.project), True
            else:
                raise ReviewtrailError("no store to record the trace in")
        return self._opened

    def opened(self) -> Store:
        """The store to record the call in; the error that kept the save from beginning, if any."""
        if self._failure is not None:
            raise self._failure
        return self._open()

    def close(self) -> None:
        self.marker.clear()
        if self._owned and self._opened is not None:
            self._opened.close()
        self._opened = None


def _marker(project: Path, call: ReviewCall, store: Store | StoreLocator | None) -> PendingMarker | None:
    """A pending marker when the call will be recorded in a store (see ``_pending``)."""
    from reviewtrail.tracing.custody._ledger_link import store_present

    try:
        present = store_present(store, project)
    except ReviewtrailError:
        present = True  # unreadable settings: reported after the trace is safe, and marked meanwhile
    return PendingMarker(project, call.skill, call.purpose) if present else None


def record_call(
    call: ReviewCall,
    *,
    project_dir: str | Path | None = None,
    mode: str | None = None,
    skill_args: str | None = None,
    run_id: str | None = None,
    env: Mapping[str, str] | None = None,
    store: Store | StoreLocator | None = None,
) -> TraceResult:
    """Write one reviewer call in the ``.aris/traces`` layout, append its event, and
    (when the caller passes the project's open ``store``, or a locator that finds one) record
    it in the ledger. Validates everything before writing anything. ``env``: the trace settings
    by variable name (none when not given).

    With a store, a pending marker names the call before its first file is written and
    is removed once the record is appended, so an interrupted save is found by
    ``trace_ledger_problems`` and completed by ``repair_trace_links``.
    """
    env = {} if env is None else env
    call.validate()
    explicit_run = run_id or env.get("ARIS_TRACE_RUN_ID") or None
    if explicit_run is not None:
        check_run_id(explicit_run, "run_id")
    chosen: TraceMode = resolve_mode(mode, skill_args=skill_args, env=env)
    if chosen == "off":
        return TraceResult(mode="off")
    project = _project(project_dir)
    return _write(call, project, chosen, explicit_run, env, store)


def _write(
    call: ReviewCall,
    project: Path,
    chosen: TraceMode,
    explicit_run: str | None,
    env: Mapping[str, str],
    store: Store | StoreLocator | None,
) -> TraceResult:
    now = datetime.now().astimezone()
    start, end = call.times(now)
    assurance = call.assurance()
    marker = _marker(project, call, store)
    link = _SaveLink(project, call, marker, store) if marker is not None else None
    try:
        if link is not None:
            link.refuse_read_only()
        slot = allocate_and_write(
            skill_dir(project, call.skill),
            purpose=call.purpose,
            today=local_today(start),
            run_id=explicit_run,
            thread_id=call.thread_id,
            executor=call.executor,
            backend=call.backend,
            idle_seconds=idle_window(env),
            run_meta=build_run_meta(call, run_id="", started=start, project_dir=str(project), mode=chosen),
            request=build_request(call, assurance, number=0, start=start, mode=chosen),
            response=call.response if chosen == "full" and call.response is not None else None,
            meta=build_meta(call, assurance, number=0, start=start, end=end, mode=chosen),
            claim=link.claim if link is not None else None,
        )
    except BaseException:
        if link is not None:
            link.close()  # the writer removed what it wrote
        raise
    try:
        record_id = _event_and_record(call, project, slot, chosen, assurance, (start, end), link)
    finally:
        if link is not None:
            link.close()
    return TraceResult(
        mode=chosen,
        run_id=slot.run_id,
        call_number=slot.files.number,
        run_path=slot.path,
        request_path=slot.files.request,
        response_path=slot.files.response if chosen == "full" and call.response is not None else None,
        meta_path=slot.files.meta,
        acceptance_status=assurance.acceptance_status,
        review_independence=assurance.review_independence,
        ledger_record_id=record_id,
    )


def _event_and_record(
    call: ReviewCall,
    project: Path,
    slot: RunSlot,
    chosen: TraceMode,
    assurance: Assurance,
    times: tuple[datetime, datetime],
    link: _SaveLink | None,
) -> str | None:
    """Append the call's event line and, when a store is there, its ledger record (its id). On
    failure the marker is left for ``verify`` to report and ``--repair`` to complete (when the
    ledger holds the record that the save began), and the error says what was written and what
    was not."""
    start, end = times
    trace_path = f"{slot.path.relative_to(project).as_posix()}/"
    number = slot.files.number
    step = "its event line was not appended"
    try:
        line = append_event(
            project, build_event(call, assurance, trace_path=trace_path, number=number, end=end, mode=chosen)
        )
        if link is None:
            return None
        from reviewtrail.tracing.custody._ledger_link import append_trace_record
        from reviewtrail.tracing.files._origin import ensure_project_id

        step = "it was not recorded in the store"
        return append_trace_record(
            link.opened(),
            skill=call.skill,
            run_id=slot.run_id,
            trace_path=trace_path,
            prompt=call.prompt,
            response=call.response,
            meta=build_meta(call, assurance, number=number, start=start, end=end, mode=chosen),
            mode=chosen,
            actor=call.executor or "unknown-executor",
            files=slot.written,
            event=digest(line),
            save=link.marker.save,
            origin=ensure_project_id(project),
        )
    except BaseException as exc:
        recoverable = link is not None and link.begun
        if link is not None:
            link.marker.release()  # left for verify to report and repair to complete
        if isinstance(exc, ReviewtrailError):
            exc.args = (
                f"trace written to {slot.files.meta} but {step}: {exc}"
                + ("; 'reviewtrail verify --repair' completes it" if recoverable else ""),
            )
        raise


@contextmanager
def trace_review(
    skill: str,
    purpose: str,
    *,
    project_dir: str | Path | None = None,
    mode: str | None = None,
    skill_args: str | None = None,
    run_id: str | None = None,
    env: Mapping[str, str] | None = None,
    store: Store | StoreLocator | None = None,
    **facts: Any,
) -> Iterator[ReviewCall]:
    """Wrap a reviewer call; the trace is written (and recorded in ``store``, if given) when the
    block ends.

    Set ``call.response`` (str or bytes, kept verbatim), ``call.verdict``, the completion
    flags and ``call.reported_reviewer_model`` inside the block. ``duration_ms`` is
    measured. An exception becomes status ``error`` with the error kept, and nothing is
    marked completed or positive; the exception is re-raised after the trace is written.
    """
    call = ReviewCall(skill=skill, purpose=purpose, **facts)
    call.validate()
    started = datetime.now().astimezone()
    t0 = time.perf_counter()
    try:
        yield call
    except BaseException as exc:
        call.status = "error"
        call.error = {"type": type(exc).__name__, "message": str(exc)}
        call.review_completed = call.review_scope_complete = call.review_positive = False
        raise
    finally:
        call.duration_ms = int((time.perf_counter() - t0) * 1000)
        call.started_at = started
        call.ended_at = datetime.now().astimezone()
        if isinstance(call.response, str):
            call.response = call.response.encode("utf-8")
        record_call(
            call, project_dir=project_dir, mode=mode, skill_args=skill_args, run_id=run_id, env=env, store=store
        )


def traced_review(
    skill: str, purpose: str, *, prompt_arg: str = "prompt", **options: Any
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator: trace every call of a function that takes a prompt and returns the response text."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def inner(*args: P.args, **kwargs: P.kwargs) -> R:
            prompt = kwargs.get(prompt_arg, args[0] if args else None)
            with trace_review(skill, purpose, prompt=prompt if isinstance(prompt, str) else None, **options) as call:
                result = fn(*args, **kwargs)
                if isinstance(result, (str, bytes)):
                    call.response = result.encode("utf-8") if isinstance(result, str) else result
            return result

        return inner

    return wrap
