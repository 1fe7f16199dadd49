"""The tools that append records: each the library call its command makes, with its checks.

``declare_artifact`` (``artifact declare``), ``run_code`` (``run``, and persistent kernels),
``review_checkpoint`` (``review run``, recorded with trigger ``review_checkpoint``),
``save_trace`` (``trace save``), ``record_claims`` (``claims extract``), ``link_evidence``
(``evidence link``). Each returns what its command prints with ``--json``.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from reviewtrail.agents._outcome import failed_outcome, outcome_once
from reviewtrail.agents._signature import fields_of, parameters_of, with_parameters
from reviewtrail.agents._toolbox import Toolbox
from reviewtrail.errors import InvalidInputError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

    from reviewtrail.provenance.runs import RunOutcome, RunRequest

__all__ = ["KERNEL", "register_record_tools"]

Json = dict[str, Any]
Project = Annotated[
    str | None, Field(description="Project of sessions and artifacts (default: the server's, REVIEWTRAIL_PROJECT).")
]
Spec = Annotated[str, Field(description="NAME or NAME@VERSION of an artifact (NAME alone: its latest version).")]


def register_record_tools(server: MCPServer[Any], box: Toolbox) -> None:
    """Add the record-writing tools to ``server``."""
    _artifacts(server, box)
    _run_code(server, box)
    _trace(server, box)
    _claims(server, box)


def _artifacts(server: MCPServer[Any], box: Toolbox) -> None:
    @box.tool(server, writes=True)
    def declare_artifact(
        name: Annotated[str, Field(description="Artifact name: the version chain it extends.")],
        session: Annotated[str, Field(description="Session whose workspace holds the file.")],
        path: Annotated[str, Field(description="File path inside the session's workspace.")],
        media_type: Annotated[str | None, Field(description="Media type (default: by suffix).")] = None,
        prompt_manifest: Annotated[
            str | None, Field(description="Record id of the model turn that declared it.")
        ] = None,
        actor: Annotated[str, Field(description="Who declares it.")] = "agent",
    ) -> Json:
        """declare_artifact: make a file of a session's workspace the next version of NAME (origin
        llm_declared), linked to the recorded runs that wrote exactly these bytes there. Refused
        (exit 6) while a run of the session is pending; bytes no recorded run wrote are declared with
        a warning (in "warnings"). As 'reviewtrail artifact declare NAME --session S --path P --json'."""
        from reviewtrail.provenance.artifacts import declare_artifact as declare

        info = declare(
            box.store, session_id=session, name=name, path=path, media_type=media_type, actor=actor,
            prompt_manifest_id=prompt_manifest,
        )  # fmt: skip
        return info.to_json()

    @box.tool(server, writes=True)
    def review_checkpoint(
        spec: Spec,
        project: Project = None,
        tier: Annotated[str | None, Field(description="quick, smart or deep (default: the enabled tier).")] = None,
        force: Annotated[
            bool, Field(description="Review again even when this unchanged version was reviewed the same way.")
        ] = False,
    ) -> Json:
        """review_checkpoint: run the Reviewer Specialist on an artifact version and record the review
        (trigger review_checkpoint): its findings and the summary for the agent's next prompt.
        Read-only feedback: the artifact is never changed. Needs the reviewer enabled
        (REVIEWTRAIL_REVIEWER=quick|smart|deep where the server starts; else exit 5). An unchanged
        version already reviewed with the same configuration reuses that review (reusedFromReviewId)
        unless force. As 'reviewtrail review run SPEC --json'."""
        from reviewtrail.errors import ConfigError
        from reviewtrail.provenance.artifacts import parse_spec
        from reviewtrail.reviewer import review_artifact, reviewer_tier

        name, version = parse_spec(spec)
        enabled = reviewer_tier(box.settings.reviewer)
        if enabled is None:
            raise ConfigError(
                "the Reviewer Specialist is off; set REVIEWTRAIL_REVIEWER=quick (or smart, deep)", field="reviewer"
            )
        outcome = review_artifact(
            box.store, name, version, project_id=project or box.project,
            tier=tier or enabled,  # type: ignore[arg-type]  # checked by review_artifact
            trigger="review_checkpoint", settings=box.settings.reviewer, trace=box.settings.trace, force=force,
        )  # fmt: skip
        return outcome.to_json()


def _run_code(server: MCPServer[Any], box: Toolbox) -> None:
    from reviewtrail.provenance.runs import run_request

    def run_code(**arguments: Any) -> Json | CallToolResult:
        """run_code: run code under bubblewrap in a session's workspace and record the ExecutionRun,
        as 'reviewtrail run --json' (code, session, project, lang, env K=V, timeout, network
        none|allowlist with allow HOST[:PORT] and allow_resolve HOST=IP, max_memory, max_procs,
        max_file_size, max_output, cwd, weak_limits; file: a code file in the project folder, or a
        folder given with --allow-path, copied in as the code).
        The result is the recorded run, with the code's stdout and stderr under "output" (at most 64 KiB
        of each: its first and last 32 KiB when longer, "outputBytes" giving the whole size; the run's
        record holds them whole), carried once, in the structured content. A run whose
        code failed, hit a limit or was cancelled is recorded and returned as a tool error (exit
        code 7). kernel: true runs the code in the session's persistent kernel for its language
        (python or bash; started on the first such call, kept by the server, so variables persist),
        each evaluation a recorded run with kernelMode persistent. Needs a server started with
        --allow-writes --allow-run."""
        from reviewtrail.provenance.sandbox import require_bwrap

        kernel = bool(arguments.pop("kernel"))
        project = arguments.pop("project") or box.project
        file = arguments.pop("file")
        if file is not None:  # copied from the project, as code: never read from anywhere else
            if arguments.get("code") is not None:
                raise InvalidInputError("give exactly one of file or code", field="code")
            arguments["code"] = box.paths.read_text(file, "code", field="file")
        request = run_request(project=project, **arguments)
        require_bwrap()  # before a session is created for the run
        if kernel:
            outcome = _in_kernel(box, request)
        else:
            from reviewtrail.provenance.runs import start_run

            outcome = start_run(box.store, request, on_wait=lambda message: print(message, file=sys.stderr))
        return _run_result(outcome)

    parameters = parameters_of(run_request, defaults={"project": None})
    box.tool(server, writes=True, runs=True)(with_parameters(run_code, [*parameters, KERNEL], returns=Json))


KERNEL = inspect.Parameter(
    "kernel",
    inspect.Parameter.KEYWORD_ONLY,
    default=False,
    annotation=Annotated[
        bool,
        Field(description="Run in the session's persistent kernel for lang (kept by the server between calls)."),
    ],
)


def _in_kernel(box: Toolbox, request: RunRequest) -> RunOutcome:
    session = request.session_id
    if session is None:
        from reviewtrail.provenance.runs import create_session

        session = create_session(box.store, request.project_id).session_id
    return box.kernels.evaluate(session, request)


#: The most bytes of each of a run's streams a run_code result shows; the run's record holds them
#: whole (its stdout and stderr references), as the run's own max_output allowed.
SHOWN_OUTPUT_MAX = 64 << 10


def _shown(data: bytes) -> str:
    """A stream as the result shows it: its text, its first and last halves of
    :data:`SHOWN_OUTPUT_MAX` bytes when longer, the bytes left out counted between them."""
    half = SHOWN_OUTPUT_MAX // 2
    if len(data) <= SHOWN_OUTPUT_MAX:
        return data.decode("utf-8", "replace")
    left = len(data) - 2 * half
    text = (
        data[:half].decode("utf-8", "replace")
        + f"\n[... {left:,} bytes not shown: the run's record holds the whole stream ...]\n"
        + data[-half:].decode("utf-8", "replace")
    )
    return text


def _run_result(outcome: RunOutcome) -> Json | CallToolResult:
    from reviewtrail.errors import EXIT_RUN_FAILED

    doc = outcome.to_json()
    result = outcome.result
    streams = {"stdout": result.stdout, "stderr": result.stderr} if result is not None else {}
    doc["output"] = {name: _shown(streams[name]) if name in streams else None for name in ("stdout", "stderr")}
    doc["outputBytes"] = {name: len(data) for name, data in streams.items()}
    doc["outputTruncated"] = any(len(data) > SHOWN_OUTPUT_MAX for data in streams.values())
    run = outcome.run
    sizes = ", ".join(f"{name} {len(data):,} bytes" for name, data in streams.items())
    shown = f"; {sizes} under output" if sizes else ""
    if run.status == "succeeded":
        return outcome_once(doc, f"run {outcome.id}: succeeded (exit {run.exit_code}){shown}")
    limit = f"; limit exceeded: {run.limit_exceeded}" if run.limit_exceeded else ""
    summary = f"run {outcome.id}: {run.status} (exit {run.exit_code}){limit}{shown}"
    return failed_outcome(doc, EXIT_RUN_FAILED, summary, once=True)


def _trace(server: MCPServer[Any], box: Toolbox) -> None:
    from reviewtrail.tracing.commands import TraceSaveRequest

    required = {"skill", "purpose"}

    def save_trace(**arguments: Any) -> Json:
        """save_trace: save one reviewer call in the .aris/traces protocol layout (run.meta.json,
        NNN-<purpose>.request.json / response.md / meta.json, the events.jsonl line) and record it
        in the store, as 'reviewtrail trace save --json' and the reference save_trace.sh: every
        field of the protocol (skill, purpose, backend, tool, executor, executor_model,
        requested_reviewer_model, reported_reviewer_model (never copy the requested name into it),
        model, effort, thread_id, prompt, response (or prompt_file, response_file: UTF-8 files in
        the project folder or a folder given with --allow-path), status, verdict, review_completed,
        review_scope_complete, review_positive (or gate with score), trace_mode full|meta|off,
        files_referenced, duration_ms, ...). The rules derive
        reviewer_model, review_independence and acceptance_status; declared families are recorded as
        claims only. An empty string is taken as not given, except for skill and purpose."""
        from reviewtrail.tracing.commands import save_trace as save
        from reviewtrail.tracing.commands import trace_save_request

        options = {k: (None if v == "" and k not in required else v) for k, v in arguments.items()}
        options = _trace_paths(box, options)
        result = save(trace_save_request(options), env=box.settings.trace.environ(), store=box.store)
        return result.to_json()

    box.tool(server, writes=True)(with_parameters(save_trace, fields_of(TraceSaveRequest), returns=Json))


def _trace_paths(box: Toolbox, options: dict[str, Any]) -> dict[str, Any]:
    """The save's paths through the server's path rule: the prompt and response files read (as
    UTF-8 text) from where the rule allows, native evidence and the project folder resolved there;
    the project folder defaults to the server's."""
    out = dict(options)
    for name, kind, text in (("prompt_file", "prompt", "prompt"), ("response_file", "trace-response", "response")):
        given = out.pop(name, None)
        if given is None:
            continue
        if out.get(text) is not None:
            raise InvalidInputError(f"give {text} or {name}, not both", field=text)
        out[text] = box.paths.read_text(given, kind, field=name)  # type: ignore[arg-type]  # an InputKind
    for name in ("native_evidence", "project_dir"):
        if out.get(name) is not None:
            out[name] = box.paths.resolve(out[name], field=name)
    if out.get("project_dir") is None:
        out["project_dir"] = box.paths.roots[0]
    for written in (".aris/traces", ".aris/meta"):  # where the save writes: a link there must not lead out
        box.paths.resolve(Path(out["project_dir"]) / written, field="project_dir")
    return out


def _claims(server: MCPServer[Any], box: Toolbox) -> None:
    @box.tool(server, writes=lambda arguments: not arguments.get("dry_run"))
    def record_claims(
        text: Annotated[str, Field(description="The assistant reply (Markdown).")],
        review_run: Annotated[str | None, Field(description="reviewRunId to record.")] = None,
        turn: Annotated[str | None, Field(description="turnId to record.")] = None,
        aliases: Annotated[
            dict[str, Any] | None,
            Field(description='The turn\'s alias map, chip -> evidence id: {"ev1": "ev-3f2a..."}.'),
        ] = None,
        artifact: Annotated[
            str | None, Field(description="NAME[@VERSION]: the alias map also applies to this artifact version.")
        ] = None,
        project: Project = None,
        dry_run: Annotated[bool, Field(description="Return the claims without recording them.")] = False,
    ) -> Json:
        """record_claims: extract the sentences of a reply that carry [TYPE:ID] citations or evidence
        chips ([ev1], [evidence2], [artifact3]) as claims, resolve the citations and record them,
        with the turn's alias map when given. Citations that resolve to nothing recorded are listed
        under "unresolved", never dropped. As 'reviewtrail claims extract FILE --json'."""
        from reviewtrail.evidence import parse_aliases, record_reply_claims

        mapping = parse_aliases(aliases) if aliases is not None else None
        result = record_reply_claims(
            box.store, text, review_run_id=review_run, turn_id=turn, aliases=mapping, artifact=artifact,
            project_id=project or box.project, dry_run=dry_run,
        )  # fmt: skip
        return result.to_json()

    @box.tool(server, writes=True, idempotent=True)
    def link_evidence(
        claim: Annotated[str, Field(description="Claim id (from record_claims).")],
        evidence: Annotated[str, Field(description="Evidence id.")],
        relation: Annotated[str, Field(description="supports, context or contradicts.")] = "supports",
    ) -> Json:
        """link_evidence: link a claim to an evidence item (supports, context or contradicts); the
        same link is never recorded twice. As 'reviewtrail evidence link CLAIM EVIDENCE --json'."""
        from reviewtrail.evidence import link_evidence as link

        envelope = link(box.store, claim, evidence, relation)  # type: ignore[arg-type]  # checked there
        return envelope.to_json()
