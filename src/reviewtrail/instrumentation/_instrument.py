"""``instrument(client)``: a client of the OpenAI or Anthropic SDK whose calls are recorded.

The client is changed in place and returned: its ``chat.completions.create`` and ``parse``,
``responses.create`` and ``parse`` (OpenAI; their ``stream`` helpers call ``create``) or
``messages.create``, ``parse`` and ``stream``, and the same under ``beta`` (Anthropic) are replaced,
on this client object only, by wrappers that call the SDK's own method. Clients made from it by
``copy()`` or ``with_options()`` are instrumented the same way. No SDK is imported here: the client
is recognised by the package its class comes from.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from reviewtrail.errors import InvalidInputError
from reviewtrail.instrumentation._parse import read_parse_request
from reviewtrail.instrumentation._recorder import Endpoint, Recorder
from reviewtrail.instrumentation._request import Api, read_request
from reviewtrail.instrumentation._wrap import (
    Method,
    RequestReader,
    async_method,
    read_stream_request,
    stream_method,
    sync_method,
)

if TYPE_CHECKING:
    from reviewtrail.ledger import Privacy
    from reviewtrail.store import Store

__all__ = ["instrument"]

C = TypeVar("C")

# Hosts whose prices genai-prices knows under a provider id (as reviewtrail.models' backends): a local
# server answering as "gpt-4o" is not OpenAI, so its calls are priced only when the caller names one.
_KNOWN_HOSTS = {"api.openai.com": "openai", "api.anthropic.com": "anthropic"}
# (path to the resource, method, API, wrapper kind) per SDK
_METHODS: dict[str, tuple[tuple[tuple[str, ...], str, Api, str], ...]] = {
    "openai": (
        (("chat", "completions"), "create", "openai-chat", "call"),
        (("chat", "completions"), "parse", "openai-chat", "parse"),
        (("responses",), "create", "openai-responses", "call"),
        (("responses",), "parse", "openai-responses", "parse"),
    ),
    "anthropic": (
        (("messages",), "create", "anthropic", "call"),
        (("messages",), "parse", "anthropic", "parse"),
        (("messages",), "stream", "anthropic", "stream"),
        (("beta", "messages"), "create", "anthropic", "call"),
        (("beta", "messages"), "parse", "anthropic", "parse"),
        (("beta", "messages"), "stream", "anthropic", "stream"),
    ),
}
# How each kind of method's arguments are read into its request.
_READERS: dict[str, RequestReader] = {"call": read_request, "parse": read_parse_request, "stream": read_stream_request}
_instrumented: weakref.WeakSet[Any] = weakref.WeakSet()


def instrument(
    client: C,
    *,
    store: Store | None = None,
    project_dir: str | Path | None = None,
    provider: str | None = None,
    actor: str = "agent",
    privacy: Privacy = "private",
    session_id: str | None = None,
    env: Mapping[str, str] | None = None,
) -> C:
    """Record every call of ``client`` (an ``openai.OpenAI``/``AsyncOpenAI`` or an
    ``anthropic.Anthropic``/``AsyncAnthropic``) and return it.

    Each call appends a ``provenance.prompt-manifest@1`` and a ``provenance.model-usage@1`` (the
    input and answer text in the CAS, tokens and cost) to ``store`` before it returns; a stream's
    when it ends. Calls made inside :func:`reviewer_call` blocks are also saved as reviewer traces
    under ``project_dir``. The caller sees what the SDK returns and raises, unchanged.

    ``store``: an open store (default: the project's, opened from the settings of ``env``, default
    the process environment, and of ``project_dir``'s ``reviewtrail.toml``; it must exist).
    ``project_dir``: where traces go (default: the current folder). ``provider``: the
    ``genai-prices`` provider id to price calls with (default: ``openai`` for api.openai.com,
    ``anthropic`` for api.anthropic.com, unknown elsewhere). ``actor``, ``privacy`` and
    ``session_id`` go into the records. Instrumenting a client twice changes nothing.
    """
    from reviewtrail.config import load_settings
    from reviewtrail.ledger import NewRecord
    from reviewtrail.models import MANIFEST_TYPE
    from reviewtrail.tracing.files import existing_project_root

    sdk = _sdk(client)
    if client in _instrumented:
        return client
    NewRecord.make(type=MANIFEST_TYPE, actor=actor, privacy=privacy)  # actor and privacy, checked now
    project = existing_project_root(project_dir)
    settings = load_settings(env, cwd=project)
    if store is None:
        from reviewtrail.app import open_store

        store = open_store(settings)
    recorder = Recorder(
        store,
        project_dir=project,
        trace_env=settings.trace.environ(),
        actor=actor,
        privacy=privacy,
        session_id=session_id,
    )
    _patch(client, sdk, recorder, provider)
    return client


def _sdk(client: object) -> str:
    package = type(client).__module__.split(".", 1)[0]
    if package not in _METHODS:
        raise InvalidInputError(
            f"{type(client).__module__}.{type(client).__qualname__} is not an OpenAI or Anthropic SDK client",
            field="client",
        )
    return package


def _host(client: object) -> tuple[str, str]:
    """(host, the endpoint as recorded: ``host[:port]``, as reviewtrail.models' backends write it, the
    port left out only when it is HTTPS's 443)."""
    base_url = getattr(client, "base_url", None)
    host = getattr(base_url, "host", None)
    parts = urlsplit(str(base_url))
    if not isinstance(host, str) or not host:
        host = parts.hostname or ""
    if not host:
        return "unknown", "unknown"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = 443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None
    named = f"[{host}]" if ":" in host else host
    if port is None or (parts.scheme, port) == ("https", 443):
        return host, named
    return host, f"{named}:{port}"


def _patch(client: Any, sdk: str, recorder: Recorder, provider: str | None) -> None:
    host, endpoint_host = _host(client)
    chosen = provider if provider is not None else _KNOWN_HOSTS.get(host)
    if sdk == "anthropic" and provider is None:
        chosen = "anthropic"  # as reviewtrail.models' Anthropic backend: the Messages API is Anthropic's
    endpoint = Endpoint(recorder, endpoint_host, chosen, sdk)
    for path, name, api, kind in _METHODS[sdk]:
        resource = client
        for part in path:
            resource = getattr(resource, part, None)
        original = getattr(resource, name, None)
        if resource is None or not callable(original):
            continue  # an SDK version without this API
        # The SDKs decorate their async methods with plain functions that return coroutines, so the
        # asynchronous resources are told by their classes' names (AsyncCompletions, AsyncMessages...).
        asynchronous = type(resource).__name__.startswith("Async") or inspect.iscoroutinefunction(original)
        method = Method(api, ".".join((sdk, *path, name)), _READERS[kind])
        setattr(resource, name, _wrapped(kind, asynchronous, original, method, endpoint))
    _follow_copies(client, sdk, recorder, provider)
    _instrumented.add(client)


def _wrapped(
    kind: str, asynchronous: bool, original: Callable[..., Any], method: Method, endpoint: Endpoint
) -> Callable[..., Any]:
    if kind == "stream":
        return stream_method(original, method, endpoint, asynchronous=asynchronous)
    return (async_method if asynchronous else sync_method)(original, method, endpoint)


def _follow_copies(client: Any, sdk: str, recorder: Recorder, provider: str | None) -> None:
    """``copy()`` and ``with_options()`` give clients recorded the same way."""
    for name in ("copy", "with_options"):
        original = getattr(client, name, None)
        if not callable(original):
            continue

        def copied(*args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            made = _original(*args, **kwargs)
            if made not in _instrumented:
                _patch(made, sdk, recorder, provider)
            return made

        setattr(client, name, copied)
