"""``reviewtrail claims | evidence | review``: claims, evidence and the Reviewer Specialist."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, print_json_stream, read_text_file, table

__all__ = ["claims_app", "evidence_app", "review_app"]

claims_app = typer.Typer(help="Claims extracted from assistant replies.", no_args_is_help=True)
evidence_app = typer.Typer(help="Evidence items and their links to claims.", no_args_is_help=True)
review_app = typer.Typer(
    help=(
        "Reviews of AI work, by a model and by people. The Reviewer Specialist, an LLM reviewer "
        "(run, show, citations; off unless REVIEWTRAIL_REVIEWER is set), and human pairwise review "
        "of a campaign's blinded candidates (queue, decide, history, session, export, export-verify)."
        "\n\nExample: reviewtrail review session support-triage --version 1"
    ),
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[str, typer.Option("--project", envvar="REVIEWTRAIL_PROJECT", help="Project id.")]


def _read_aliases(path: Path) -> dict[str, str]:
    import json

    from reviewtrail.errors import InvalidInputError
    from reviewtrail.evidence import parse_aliases
    from reviewtrail.inputs import read_input_text

    try:
        doc = json.loads(read_input_text(path, "reply", field="aliases"))
    except ValueError as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"{path} is not JSON: {exc}", field="aliases") from exc
    return parse_aliases(doc)


@claims_app.command("extract")
@handle_errors
def claims_extract(
    file: Annotated[Path, typer.Argument(help="The assistant reply ('-' for stdin).")],
    review_run: Annotated[str | None, typer.Option("--review-run", help="reviewRunId to record.")] = None,
    turn: Annotated[str | None, typer.Option("--turn", help="turnId to record.")] = None,
    aliases: Annotated[
        Path | None,
        typer.Option(
            "--aliases", help='JSON object mapping the reply\'s chips to evidence ids: {"ev1": "ev-3f2a..."}.'
        ),
    ] = None,
    artifact: Annotated[
        str | None, typer.Option("--artifact", help="NAME[@VERSION]: the alias map also applies to this artifact.")
    ] = None,
    project: ProjectOpt = "default",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the claims without recording them.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Extract the sentences carrying [TYPE:ID] citations or chips ([ev1], [evidence2], [artifact3]) as
    claims, resolve the citations, record them.

    With --aliases the turn's alias map (chip -> evidence id) resolves the chips and is recorded
    with the claims: a review applies it to an artifact with the same content as the reply, or to
    the --artifact version. Citations that resolve to nothing recorded are listed, never dropped.

    Example: reviewtrail claims extract reply.md --turn t-12 --aliases aliases.json --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.evidence import record_reply_claims

    text = read_text_file(file, "file", "reply", stdin=True)
    mapping = _read_aliases(aliases) if aliases is not None else None
    with open_store() as store:
        result = record_reply_claims(
            store,
            text,
            review_run_id=review_run,
            turn_id=turn,
            aliases=mapping,
            artifact=artifact,
            project_id=project,
            dry_run=dry_run,
        )
    if as_json:
        print_json_stream(result.to_json(stream=True))
        return
    out = sys.stdout
    for claim_id, text, citations in result.summaries():  # a line per claim, written mark by mark
        out.write(f"{claim_id}  {text[:100]}  ")
        for n, (raw, resolved) in enumerate(citations):
            out.write(f"{' ' if n else ''}{raw}{'' if resolved else ' (UNRESOLVED)'}")
        out.write("\n")
    print(f"{len(result.claims)} claim(s); {result.unresolved_count} unresolved citation(s)")


@claims_app.command("ls")
@handle_errors
def claims_ls(
    review_run: Annotated[str | None, typer.Option("--review-run", help="Only this reviewRunId.")] = None,
    turn: Annotated[str | None, typer.Option("--turn", help="Only this turnId.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List recorded claims.

    Example: reviewtrail claims ls --turn t-12 --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.evidence import claims_for

    with open_store() as store:
        claims = claims_for(store, review_run_id=review_run, turn_id=turn)
    if as_json:
        print_json([c.payload_json() for c in claims])
        return
    table(
        "claims",
        ["claim", "turn", "numeric", "citations", "text"],
        [
            [c.claim_id, c.turn_id or "", "yes" if c.numeric else "", " ".join(x.raw for x in c.citations), c.text[:80]]
            for c in claims
        ],
    )


@evidence_app.command("add")
@handle_errors
def evidence_add(
    run: Annotated[str | None, typer.Option("--run", help="An execution run id (origin execution).")] = None,
    artifact: Annotated[str | None, typer.Option("--artifact", help="NAME@VERSION (origin artifact).")] = None,
    paper: Annotated[str | None, typer.Option("--paper", help="Paper id, e.g. doi:10.1000/x (origin paper).")] = None,
    page: Annotated[int | None, typer.Option("--page", min=1, help="Page of the quoted passage.")] = None,
    quote: Annotated[str | None, typer.Option("--quote", help="The quoted passage (only its hash is kept).")] = None,
    mcp: Annotated[str | None, typer.Option("--mcp", help="SERVER/RECORD_TYPE/RECORD_ID (origin mcp-record).")] = None,
    scope: Annotated[str, typer.Option("--scope", help="curated-record, abstract or metadata.")] = "metadata",
    paper_id: Annotated[str | None, typer.Option("--paper-id", help="Paper an MCP record describes.")] = None,
    remote_job: Annotated[str | None, typer.Option("--remote-job", help="A remote job id.")] = None,
    user_input: Annotated[Path | None, typer.Option("--user-input", help="A file the user provided.")] = None,
    project: ProjectOpt = "default",
    label: Annotated[str | None, typer.Option("--label", help="A short label.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Record an evidence item (de-duplicated: the same origin always gets the same id).

    Example: reviewtrail evidence add --run 01a2b3c4-... --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.evidence import EvidenceRequest, record_evidence

    request = EvidenceRequest(
        run=run,
        artifact=artifact,
        paper=paper,
        page=page,
        quote=quote,
        mcp=mcp,
        scope=scope,
        paper_id=paper_id,
        remote_job=remote_job,
        user_input=user_input,
        project_id=project,
        label=label,
    )
    with open_store() as store:
        evidence_id, created = record_evidence(store, request)
    if as_json:
        print_json({"evidenceId": evidence_id, "created": created})
    else:
        print(f"{evidence_id}{'' if created else ' (already recorded)'}")


@evidence_app.command("link")
@handle_errors
def evidence_link(
    claim: Annotated[str, typer.Argument(help="Claim id.")],
    evidence: Annotated[str, typer.Argument(help="Evidence id.")],
    relation: Annotated[str, typer.Option("--relation", help="supports, context or contradicts.")] = "supports",
    as_json: JsonOpt = False,
) -> None:
    """Link a claim to an evidence item.

    Example: reviewtrail evidence link 01a2... ev-3f2a... --relation supports
    """
    from reviewtrail.app import open_store
    from reviewtrail.evidence import link_evidence

    with open_store() as store:
        env = link_evidence(store, claim, evidence, relation)  # type: ignore[arg-type]  # checked there
    print_json(env.to_json()) if as_json else print(f"linked {claim} -[{relation}]-> {evidence}")


@evidence_app.command("ls")
@handle_errors
def evidence_ls(
    claim: Annotated[str, typer.Option("--claim", help="The claim whose evidence to list.")], as_json: JsonOpt = False
) -> None:
    """List the evidence linked to a claim.

    Example: reviewtrail evidence ls --claim 01a2... --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.evidence import links_of

    with open_store() as store:
        links = links_of(store, claim)
    docs = [{"relation": link.relation, **item.payload_json()} for link, item in links]
    if as_json:
        print_json(docs)
        return
    table(
        f"evidence of {claim}",
        ["relation", "evidence", "origin"],
        [[d["relation"], str(d["evidenceId"]), str(d["origin"]["kind"])] for d in docs],
    )


@evidence_app.command("extract-pdf")
@handle_errors
def evidence_extract_pdf(
    paper: Annotated[str, typer.Argument(help="Paper id, e.g. doi:10.1000/x.")],
    pdf: Annotated[Path, typer.Argument(help="The paper's PDF.")],
    as_json: JsonOpt = False,
) -> None:
    """paper_extract_pdf: extract a paper's full text; only a success sets fullTextRetrieved.

    A file that is no PDF at all is refused (exit 2) and nothing is recorded; a PDF that
    cannot be read is recorded as a failed extraction.

    Example: reviewtrail evidence extract-pdf doi:10.1000/xyz paper.pdf
    """
    from reviewtrail.app import open_store
    from reviewtrail.evidence import check_pdf, record_pdf_extraction
    from reviewtrail.inputs import read_input

    data = read_input(pdf, "pdf", field="pdf")
    check_pdf(data)
    with open_store() as store:
        record = record_pdf_extraction(store, paper, data)
    if as_json:
        print_json(record.payload_json())
    else:
        print(f"{paper}: extraction {record.status}" + (f" ({record.error})" if record.error else ""))


@review_app.command("run")
@handle_errors
def review_run(
    spec: Annotated[str, typer.Argument(help="NAME or NAME@VERSION.")],
    project: ProjectOpt = "default",
    tier: Annotated[
        str | None, typer.Option("--tier", help="quick, smart or deep (default: the enabled tier).")
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Review again even when this unchanged version was reviewed with the same configuration."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Review an artifact version (needs REVIEWTRAIL_REVIEWER=quick|smart|deep) and record the findings.

    Read-only feedback: the artifact is never changed. Exits 0 whatever the decision. An unchanged
    version already reviewed with the same tier and configuration reuses that review
    (reusedFromReviewId) unless --force.

    Example: REVIEWTRAIL_REVIEWER=quick reviewtrail review run report.md@2 --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.config import load_settings
    from reviewtrail.provenance.artifacts import parse_spec
    from reviewtrail.reviewer import review_artifact, reviewer_tier

    name, version = parse_spec(spec)
    settings = load_settings()
    enabled = reviewer_tier(settings.reviewer)
    if enabled is None:
        from reviewtrail.errors import ConfigError

        raise ConfigError(
            "the Reviewer Specialist is off; set REVIEWTRAIL_REVIEWER=quick (or smart, deep)", field="reviewer"
        )
    with open_store(settings) as store:
        outcome = review_artifact(
            store,
            name,
            version,
            project_id=project,
            tier=tier or enabled,  # type: ignore[arg-type]
            trigger="cli",
            settings=settings.reviewer,
            trace=settings.trace,
            force=force,
        )
    _print_review(outcome.to_json(), as_json)


def _print_review(doc: dict[str, object], as_json: bool) -> None:
    if as_json:
        print_json(doc)
        return
    reused = f" (reused from {doc['reusedFromReviewId']})" if doc.get("reusedFromReviewId") else ""
    print(f"review {doc['reviewRunId']} of {doc['name']}@{doc['version']} ({doc['tier']}): {doc['decision']}{reused}")
    for f in doc["findings"]:  # type: ignore[attr-defined]
        print(f"  [{f['severity']}] {f['code']}: {f['message']}")
    print(f"summary: {doc['summary']}")


@review_app.command("show")
@handle_errors
def review_show(
    ref: Annotated[str, typer.Argument(help="Review run id, or NAME[@VERSION] for its reviews.")],
    project: ProjectOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Show recorded reviews with their findings and summary.

    Example: reviewtrail review show report.md@2
    """
    from reviewtrail.app import open_store
    from reviewtrail.reviewer import get_review

    with open_store() as store:
        outcomes = get_review(store, ref, project)
    if as_json:
        print_json([o.to_json() for o in outcomes])
        return
    for o in outcomes:
        _print_review(o.to_json(), False)


@review_app.command("summary")
@handle_errors
def review_summary(
    spec: Annotated[str, typer.Argument(help="NAME[@VERSION] (NAME alone: its latest version).")],
    project: ProjectOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """The latest Reviewer Specialist findings of an artifact version as a short, bounded text for
    an agent's next prompt (read-only feedback), with the review run it came from, so the agent's
    next trace can cite it. A version with no review run is exit 3 (field review): an older
    version's review is never given for a newer one.

    Example: reviewtrail review summary report.md@2 --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.reviewer import review_summary as latest_summary

    with open_store() as store:
        found = latest_summary(store, spec, project)
    if as_json:
        print_json(found.to_json())
    else:
        print(found.context_text())


@review_app.command("citations")
@handle_errors
def review_citations(
    file: Annotated[Path, typer.Argument(help="Markdown reply or document ('-' for stdin).")], as_json: JsonOpt = False
) -> None:
    """Quick-tier citation check of a text: markers, reference sections, identifiers, placeholders.

    Prints {decision, findings: [{code, severity, message, ...}]}; exits 0 whatever the decision.

    Example: reviewtrail review citations draft.md --json
    """
    from reviewtrail.reviewer import check_citations

    report = check_citations(read_text_file(file, "file", "reply", stdin=True))
    doc = report.to_json()
    if as_json:
        print_json(doc)
        return
    print(doc["decision"])
    for f in doc["findings"]:
        print(f"  [{f['severity']}] {f['code']}: {f['message']}")
