"""The wrappers set in place of a client's methods: they call the SDK's own method with the same
arguments, return what it returns and raise what it raises, and record the call on the way."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewtrail.instrumentation._answers import answer_of
from reviewtrail.instrumentation._calls import Call
from reviewtrail.instrumentation._parse import read_parse_request
from reviewtrail.instrumentation._recorder import Endpoint
from reviewtrail.instrumentation._request import Api, Request, read_request
from reviewtrail.instrumentation._streams import watch_async_stream, watch_stream

__all__ = [
    "Method",
    "RequestReader",
    "async_method",
    "read_stream_request",
    "stream_method",
    "sync_method",
]

_RAW_HEADER = "x-stainless-raw-response"


def _raw_mode(kwargs: Mapping[str, Any]) -> str | None:
    """``raw`` or ``stream`` when the call comes through ``with_raw_response`` or
    ``with_streaming_response`` (the SDKs mark those calls with a request header)."""
    headers = kwargs.get("extra_headers")
    if not isinstance(headers, Mapping):
        return None
    for name, value in headers.items():
        if isinstance(name, str) and name.lower() == _RAW_HEADER and isinstance(value, str):
            return value
    return None


def _is_stream(result: object) -> bool:
    return hasattr(result, "_iterator") and hasattr(result, "response") and hasattr(result, "close")


def _unwatched(tool: str) -> None:
    warnings.warn(
        f"reviewtrail: {tool} through with_streaming_response is not recorded (its body is read by the caller)",
        RuntimeWarning,
        stacklevel=3,
    )


def _deliver(call: Call, result: Any) -> Any:
    """Watch a stream, or record a whole answer; the result itself is returned unchanged."""
    parsed = result
    if hasattr(result, "http_response") and callable(getattr(result, "parse", None)):
        parsed = result.parse()  # with_raw_response: the SDK keeps what it parsed, the caller gets the same
    if _is_stream(parsed):
        watch_stream(parsed, call)
    else:
        call.finish(answer_of(call.request.api, parsed))
    return result


async def _deliver_async(call: Call, result: Any) -> Any:
    parsed = result
    if hasattr(result, "http_response") and callable(getattr(result, "parse", None)):
        parsed = result.parse()  # a coroutine for the async SDK responses, a value for the legacy ones
        if inspect.isawaitable(parsed):
            parsed = await parsed
    if _is_stream(parsed):
        watch_async_stream(parsed, call)
    else:
        await call.finish_async(answer_of(call.request.api, parsed))
    return result


# How a method's keyword arguments are read into the request it sends.
RequestReader = Callable[[Api, dict[str, Any]], Request]


@dataclass(frozen=True)
class Method:
    """An SDK method whose calls are recorded: the API it speaks, its name in the records
    (``openai.chat.completions.parse``...), and how its arguments are read into its request."""

    api: Api
    tool: str
    read: RequestReader = read_request

    def request(self, kwargs: dict[str, Any]) -> Request:
        return dataclasses.replace(self.read(self.api, kwargs), tool=self.tool)


def read_stream_request(api: Api, kwargs: dict[str, Any]) -> Request:
    """The request a stream helper (Anthropic's ``messages.stream``) makes: its arguments (a class
    given as ``output_format`` sent as its schema, as ``parse`` sends it), and ``stream: true`` in its body."""
    request = read_parse_request(api, kwargs) if api == "anthropic" else read_request(api, kwargs)
    return dataclasses.replace(request, stream=True, settings={**request.settings, "stream": True})


def sync_method(original: Callable[..., Any], method: Method, endpoint: Endpoint) -> Callable[..., Any]:
    """``create`` (or ``parse``) of a synchronous client, recorded."""

    @functools.wraps(original)
    def create(*args: Any, **kwargs: Any) -> Any:
        request = method.request(kwargs)
        if _raw_mode(kwargs) == "stream":
            _unwatched(request.tool)
            return original(*args, **kwargs)
        call = Call(endpoint, request)
        try:
            result = original(*args, **kwargs)
        except BaseException as exc:
            call.fail(exc)
            raise
        return _deliver(call, result)

    return create


def async_method(original: Callable[..., Any], method: Method, endpoint: Endpoint) -> Callable[..., Any]:
    """``create`` (or ``parse``) of an asynchronous client, recorded."""

    @functools.wraps(original)
    async def create(*args: Any, **kwargs: Any) -> Any:
        request = method.request(kwargs)
        if _raw_mode(kwargs) == "stream":
            _unwatched(request.tool)
            return await original(*args, **kwargs)
        call = Call(endpoint, request)
        try:
            result = await original(*args, **kwargs)
        except BaseException as exc:
            await call.fail_async(exc)
            raise
        return await _deliver_async(call, result)

    return create


# The stream managers keep the request they will make (at ``__enter__``) under a private name.
_MANAGER_REQUEST = (
    "_MessageStreamManager__api_request",
    "_AsyncMessageStreamManager__api_request",
    "_BetaMessageStreamManager__api_request",
    "_BetaAsyncMessageStreamManager__api_request",
)


def _request_slot(manager: object) -> str | None:
    for name in _MANAGER_REQUEST:
        if name in vars(manager):
            return name
    warnings.warn(
        f"reviewtrail: {type(manager).__name__} of this SDK version keeps its request elsewhere: "
        "this stream is not recorded",
        RuntimeWarning,
        stacklevel=3,
    )
    return None


def stream_method(
    original: Callable[..., Any], method: Method, endpoint: Endpoint, *, asynchronous: bool
) -> Callable[..., Any]:
    """Anthropic's ``messages.stream``: the stream its manager opens is watched (the manager of an
    asynchronous client keeps the request pending and awaits it; a synchronous one makes it)."""

    @functools.wraps(original)
    def stream(*args: Any, **kwargs: Any) -> Any:
        request = method.request(kwargs)
        manager = original(*args, **kwargs)
        slot = _request_slot(manager)
        if slot is not None:
            kept = getattr(manager, slot)
            if asynchronous:
                setattr(manager, slot, _watch_pending(kept, endpoint, request))
            else:
                setattr(manager, slot, functools.partial(_watch_made, kept, endpoint, request))
        return manager

    return stream


def _watch_made(make_request: Callable[[], Any], endpoint: Endpoint, request: Request) -> Any:
    call = Call(endpoint, request)
    try:
        raw = make_request()
    except BaseException as exc:
        call.fail(exc)
        raise
    watch_stream(raw, call)
    return raw


async def _watch_pending(pending_request: Any, endpoint: Endpoint, request: Request) -> Any:
    call = Call(endpoint, request)
    try:
        raw = await pending_request
    except BaseException as exc:
        await call.fail_async(exc)
        raise
    watch_async_stream(raw, call)
    return raw
