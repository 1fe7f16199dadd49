"""The inspector's application: pages and their JSON, read-only (docs/human-review.md, "The
inspector").

Pages are drawn on the server from Jinja2 templates (autoescaped); the one static script adds the
keyboard shortcuts and runs under a CSP without inline script. Every route answers GET and HEAD
only (:class:`~reviewtrail.web._guard.Guard` answers anything else 405 before a route runs).
The OpenAPI description is served at ``/openapi.json``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from reviewtrail._listen import host_literal
from reviewtrail._version import __version__
from reviewtrail.errors import ReviewtrailError
from reviewtrail.human_review.records import NOTE_MAX_CHARS, RESPONSE_MAX_CHARS
from reviewtrail.web._capability import DECISION_ROUTE
from reviewtrail.web._guard import Guard
from reviewtrail.web._keys import DECISION_KEYS, NAVIGATION_KEYS
from reviewtrail.web._markdown import exact_text, render_markdown
from reviewtrail.web._pages import add_pages
from reviewtrail.web._reads import CardView, Reads
from reviewtrail.web._static import StaticFiles
from reviewtrail.web._store_pool import StorePool
from reviewtrail.web._write import refusal_status

if TYPE_CHECKING:
    from reviewtrail.store import Store
    from reviewtrail.web._write import DecisionWrites

__all__ = ["create_app"]

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])
_STATUS = {2: 400, 3: 404, 4: 500, 5: 503, 6: 409}
_STATIC = Path(__file__).parent / "static"
# Pages render on a few threads of their own, per server process: every render wants the
# interpreter, so more threads only contend (bench web_review_page, 32 clients, 100,000 items: page
# p95 52 ms and 803 req/s with 1 thread, 63 ms and 801 req/s with 2, 73 ms and 647 req/s with 4);
# two keep one slow page (a large campaign's coverage) from holding every other back. JSON reads
# have as many threads of their own. Static files take none (StaticFiles).
RENDER_THREADS = 2


def _on_threads(endpoint: Endpoint, limiter: CapacityLimiter) -> Endpoint:
    """``endpoint`` (a plain function) run on a thread that ``limiter`` lends, awaited by the
    event loop; its signature is kept for FastAPI's parameters and OpenAPI."""

    @functools.wraps(endpoint)
    async def on_thread(*args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(functools.partial(endpoint, *args, **kwargs), limiter=limiter)

    return on_thread  # type: ignore[return-value]


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("reviewtrail.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # the package's templates do not change under a running server: compiled once
    )
    env.globals["version"] = __version__
    env.globals["note_max"] = NOTE_MAX_CHARS
    env.filters["markdown"] = render_markdown
    env.filters["exact"] = exact_text
    return env


def create_app(
    store: Store,
    *,
    host: str = "127.0.0.1",
    writes: Callable[[Reads], DecisionWrites] | None = None,
    readers: StorePool | None = None,
) -> Any:
    """The inspector over ``store``, answering requests addressed to ``host`` (the loopback
    address it listens on) or ``localhost``; an ASGI application. Its reads use the read-only
    stores of ``readers``, side by side (default: ``store`` alone, one read at a time).
    Read-only unless ``writes`` (given the reads) makes the one write route
    (:mod:`~reviewtrail.web._write`)."""
    reads = Reads(readers if readers is not None else StorePool(lambda: store, size=1))
    templates = _templates()
    templates.globals["writes_on"] = writes is not None
    app = FastAPI(
        title="reviewtrail inspector",
        version=__version__,
        description="Read-only pages and JSON over a reviewtrail store, on loopback.",
        docs_url=None,  # the interactive docs load scripts from elsewhere and inline: not under this CSP
        redoc_url=None,
        openapi_url="/openapi.json",
    )

    renders = CapacityLimiter(RENDER_THREADS)
    answers = CapacityLimiter(RENDER_THREADS)

    def read(path: str, summary: str, **options: Any) -> Callable[[Endpoint], Endpoint]:
        """Register ``endpoint`` for GET and HEAD at ``path``, each with its own operation id. A
        page (a plain function answering HTML) runs on the app's own render threads, and a JSON
        read on as many of its own, so pages and JSON reads never hold each other's threads nor
        the ones the write route borrows (bench web_queue_api: p95 127 ms on anyio's 40 threads,
        63 ms on 4)."""

        def register(endpoint: Endpoint) -> Endpoint:
            name = endpoint.__name__
            html = options.get("response_class") is HTMLResponse
            plain = not inspect.iscoroutinefunction(endpoint)
            route = _on_threads(endpoint, renders if html else answers) if plain else endpoint
            app.get(path, summary=summary, operation_id=name, **options)(route)
            app.head(path, summary=summary, operation_id=f"{name}_head", **options)(route)
            return endpoint

        return register

    def page(name: str, code: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**context), status_code=code)

    @app.exception_handler(ReviewtrailError)
    async def refused(request: Request, exc: ReviewtrailError) -> Response:
        status = refusal_status(exc) or _STATUS.get(exc.exit_code, 500)
        error = {"type": type(exc).__name__, "field": exc.field, "message": str(exc), "exitCode": exc.exit_code}
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": error}, status_code=status)
        return page("error.html", status, error=error, status=status)

    @read("/", "Campaigns", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return page("index.html", campaigns=reads.campaigns())

    drawing: list[DecisionWrites] = []  # the write authority, when a capability is configured

    def drawn(request: Request, campaign: str, version: int, card: int | None) -> CardView:
        """Card ``card`` of the campaign's queue; with no card, the signed-in reviewer's next card,
        leased to them (anonymous, or on a read-only inspector: card 1, unleased)."""
        reviewer = drawing[0].reviewer(request) if card is None and drawing else None
        if reviewer is None:
            return reads.card(campaign, version, 1 if card is None else card)
        reads.check_version(version)
        found, own = drawing[0].draw(campaign, version, reviewer)
        return CardView(campaign, version, 0, found, False, reviewer, own)

    @read("/review/{campaign}/{version}", "Review: one card", response_class=HTMLResponse)
    def review(request: Request, campaign: str, version: int, card: int | None = None) -> HTMLResponse:
        view = drawn(request, campaign, version, card)
        return page(
            "review.html",
            view=view,
            decision_keys=DECISION_KEYS,
            navigation_keys=NAVIGATION_KEYS,
            response_max=RESPONSE_MAX_CHARS,
        )

    @read("/items/{item_id}/history", "Reviewed history", response_class=HTMLResponse)
    def item_history(item_id: str, change: bool = False) -> HTMLResponse:
        # ?change=1: the decision is changed judged blinded, on the card alone (no producer shown)
        card = reads.blinded_card(item_id) if change else None
        return page("history.html", history=reads.history(item_id), card=card, response_max=RESPONSE_MAX_CHARS)

    @read("/api/campaigns", "Campaign versions")
    def api_campaigns() -> list[dict[str, Any]]:
        return [c.to_json() for c in reads.campaigns()]

    @read("/api/review/{campaign}/{version}/cards/{position}", "One blinded card")
    def api_card(campaign: str, version: int, position: int) -> dict[str, Any]:
        view = reads.card(campaign, version, position)
        return {"position": view.position, "more": view.more, "card": view.card.to_json() if view.card else None}

    @read("/api/review/{campaign}/{version}/next", "The signed-in reviewer's next card, leased to them")
    def api_next(request: Request, campaign: str, version: int) -> dict[str, Any]:
        view = drawn(request, campaign, version, None)
        return {
            "reviewer": view.reviewer,
            "card": view.card.to_json() if view.card else None,
            "own": view.own.to_json() if view.own else None,
        }

    @read("/api/review/{campaign}/{version}/progress", "A campaign version's items, open and decided")
    def api_progress(request: Request, campaign: str, version: int) -> dict[str, Any]:
        progress = reads.progress(campaign, version)
        reviewer = drawing[0].reviewer(request) if drawing else None
        own = drawing[0].own(campaign, version, reviewer).to_json() if drawing and reviewer else None
        return {"items": progress.items, "open": progress.open, "decided": progress.decided, "own": own}

    @read("/api/items/{item_id}/history", "An item's decisions")
    def api_history(item_id: str) -> dict[str, Any]:
        return reads.history(item_id).to_json()

    write_routes: frozenset[str] = frozenset()
    if writes is not None:
        drawing.append(writes(reads))
        add_write_route(app, drawing[0])
        write_routes = frozenset({DECISION_ROUTE})

    add_pages(reads, page, read)
    hosts = frozenset({host_literal(host), "localhost", "127.0.0.1", "[::1]"})
    return Guard(StaticFiles(app, _STATIC), hosts=hosts, write_routes=write_routes)


def add_write_route(app: FastAPI, writes: DecisionWrites) -> None:
    """``POST /api/review/decisions``, described in OpenAPI with its fixed body schema."""
    from reviewtrail.web._decision import SignedDecision

    schema = SignedDecision.model_json_schema(by_alias=True)

    @app.post(
        DECISION_ROUTE,
        summary="Record a review decision (signed per RFC 9421 by the review capability)",
        operation_id="record_decision",
        status_code=201,
        openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}},
    )
    async def record_decision(request: Request) -> Response:
        return await writes.handle(request)
