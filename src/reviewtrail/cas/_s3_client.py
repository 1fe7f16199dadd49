"""The S3 CAS's client and the one translation of its failures into reviewtrail's errors.

boto3 is imported here, on the first request an S3 store makes: opening a store whose objects
live in S3 costs nothing until an object is read or written, and no other command loads it.
Every failure becomes a :class:`~reviewtrail.errors.BackendUnavailableError` (exit 5) whose
message names the setting to look at (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, the bucket in ``REVIEWTRAIL_CAS_URL``), never a secret.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from reviewtrail._value import Value
from reviewtrail.cas._s3_names import CAS_URL_SETTING
from reviewtrail.errors import BackendUnavailableError, InvalidInputError, ReviewtrailError

if TYPE_CHECKING:
    from reviewtrail.config import S3Settings

__all__ = [
    "S3Body",
    "S3Endpoint",
    "error_code",
    "is_missing",
    "is_precondition_failed",
    "make_client",
    "require_boto3",
    "s3_errors",
]

# Codes an S3 server answers for a key that is not there (GET: NoSuchKey; HEAD has no body: 404), or
# for an upload no longer there (an abort that another cleaner made first: NoSuchUpload).
_MISSING = {"NoSuchKey", "404", "NotFound", "NoSuchUpload"}
_PRECONDITION = {"PreconditionFailed", "412"}
_BAD_SECRET = {"SignatureDoesNotMatch"}
_UNKNOWN_KEY = {"InvalidAccessKeyId", "InvalidToken", "ExpiredToken", "TokenRefreshRequired"}
_NO_BUCKET = {"NoSuchBucket"}
# One boto3 session makes every client (loading the service's model once); a session is not
# thread-safe, so clients are made under a lock.
_SESSION_LOCK = threading.Lock()
_SESSION: list[Any] = []


class S3Endpoint(Value):
    """What messages say about where the objects are: the store's URL, the endpoint, the key id."""

    url: str  # s3://bucket/prefix/
    bucket: str
    endpoint: str | None  # AWS_ENDPOINT_URL; None is AWS S3 itself
    access_key_id: str | None  # an identifier, not a secret: messages may name it

    @property
    def where(self) -> str:
        return f"the object store at {self.endpoint}" if self.endpoint else "AWS S3"


def require_boto3() -> None:
    """Refuse an ``s3://`` CAS URL when boto3 is not installed (checked without importing it)."""
    if importlib.util.find_spec("boto3") is None:
        raise BackendUnavailableError(
            "the objects live in S3 (s3://…), which needs boto3: pip install 'reviewtrail[s3]'",
            field=CAS_URL_SETTING,
        )


def make_client(
    settings: S3Settings | None,
    *,
    pool_size: int,
    max_attempts: int,
    connect_timeout: float,
    read_timeout: float,
    target: S3Endpoint,
) -> Any:
    """A boto3 S3 client: standard retries (5xx, throttling and dropped connections are retried
    with backoff), bounded timeouts, path-style addressing for a custom endpoint."""
    require_boto3()
    import boto3
    from botocore.config import Config

    endpoint = settings.endpoint_url if settings is not None else None
    config = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        max_pool_connections=pool_size,
        s3={"addressing_style": "path"} if endpoint else {},
        user_agent_extra="reviewtrail",
    )
    try:
        with _SESSION_LOCK, s3_errors(target, "connect"):
            if not _SESSION:
                _SESSION.append(boto3.session.Session())
            return _SESSION[0].client(
                "s3",
                endpoint_url=endpoint,
                aws_access_key_id=settings.access_key_id if settings is not None else None,
                aws_secret_access_key=settings.secret_access_key if settings is not None else None,
                aws_session_token=settings.session_token if settings is not None else None,
                region_name=settings.region if settings is not None else None,
                config=config,
            )
    except ValueError as exc:  # botocore's "Invalid endpoint"
        if isinstance(exc, ReviewtrailError):
            raise
        raise InvalidInputError(
            f"{endpoint!r} is not an endpoint URL like http://host:8333", field="AWS_ENDPOINT_URL"
        ) from None


def error_code(exc: BaseException) -> str:
    """The S3 error code of a boto3 ``ClientError`` (``NoSuchKey``, ``412``…), else ``""``."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", ""))


def _status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return 0
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def is_missing(exc: BaseException) -> bool:
    """A boto3 ``ClientError`` saying the key is not there (not the bucket)."""
    return error_code(exc) in _MISSING


def is_precondition_failed(exc: BaseException) -> bool:
    """A boto3 ``ClientError`` for ``If-None-Match: *`` on a key that exists (412)."""
    return error_code(exc) in _PRECONDITION or _status(exc) == 412


@contextlib.contextmanager
def s3_errors(target: S3Endpoint, action: str) -> Iterator[None]:
    """Turn what boto3 raises while doing ``action`` into reviewtrail's errors (exit 5)."""
    import botocore.exceptions as bce

    try:
        yield
    except bce.ClientError as exc:
        raise _client_error(exc, target, action) from None
    except (bce.NoCredentialsError, bce.PartialCredentialsError):
        raise BackendUnavailableError(
            f"no credentials to {action} in {target.url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
            field="AWS_ACCESS_KEY_ID",
        ) from None
    except (bce.EndpointConnectionError, bce.ConnectTimeoutError, bce.ConnectionClosedError) as exc:
        raise BackendUnavailableError(
            f"cannot reach {target.where} to {action} in {target.url} ({_reason(exc)}); check AWS_ENDPOINT_URL "
            "and that the server is running",
            field="AWS_ENDPOINT_URL",
        ) from None
    except bce.ReadTimeoutError:
        raise BackendUnavailableError(
            f"{target.where} did not answer in time to {action} in {target.url}, after retries",
            field="AWS_ENDPOINT_URL",
        ) from None
    except bce.BotoCoreError as exc:
        raise BackendUnavailableError(
            f"could not {action} in {target.url} at {target.where}: {_reason(exc)}", field=CAS_URL_SETTING
        ) from None


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 300 else text[:300] + "…"


def _client_error(exc: BaseException, target: S3Endpoint, action: str) -> ReviewtrailError:
    code = error_code(exc)
    status = _status(exc)
    key = f"access key {target.access_key_id}" if target.access_key_id else "the access key"
    if code in _BAD_SECRET:
        return BackendUnavailableError(
            f"{target.where} refused the signature of {key} ({code}) to {action} in {target.url}: "
            "AWS_SECRET_ACCESS_KEY is not this key's secret",
            field="AWS_SECRET_ACCESS_KEY",
        )
    if code in _UNKNOWN_KEY:
        return BackendUnavailableError(
            f"{target.where} does not accept {key} ({code}) to {action} in {target.url}: check AWS_ACCESS_KEY_ID "
            "(and AWS_SESSION_TOKEN)",
            field="AWS_ACCESS_KEY_ID",
        )
    if code in _NO_BUCKET:
        return BackendUnavailableError(
            f"there is no bucket {target.bucket!r} at {target.where} (to {action}): create it, or correct the "
            f"bucket in {CAS_URL_SETTING}",
            field=CAS_URL_SETTING,
        )
    if code in {"AccessDenied", "AllAccessDisabled"} or status == 403:
        return BackendUnavailableError(
            f"{target.where} denied {key} the right to {action} in {target.url} ({code or status}): check the "
            f"key's permissions on bucket {target.bucket!r} (AWS_ACCESS_KEY_ID, {CAS_URL_SETTING})",
            field=CAS_URL_SETTING,
        )
    if status >= 500 or code in {"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout"}:
        return BackendUnavailableError(
            f"{target.where} answered {status or '?'} {code} to {action} in {target.url}, still after retries; "
            "try again later",
            field=CAS_URL_SETTING,
        )
    message = getattr(exc, "response", {}).get("Error", {}).get("Message", "") if code else ""
    return BackendUnavailableError(
        f"{target.where} refused to {action} in {target.url}: {status or '?'} {code} {message}".rstrip(),
        field=CAS_URL_SETTING,
    )


class S3Body(io.RawIOBase):
    """An object's streamed body; a connection lost mid-read is :class:`BackendUnavailableError`."""

    def __init__(self, body: Any, target: S3Endpoint, label: str) -> None:
        super().__init__()
        self._body = body
        self._target = target
        self._label = label

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        import botocore.exceptions
        import urllib3.exceptions

        try:
            return cast(bytes, self._body.read(None if size is None or size < 0 else size))
        except (botocore.exceptions.BotoCoreError, urllib3.exceptions.HTTPError, OSError) as exc:
            raise BackendUnavailableError(
                f"lost {self._target.where} while reading {self._label} ({type(exc).__name__})",
                field="AWS_ENDPOINT_URL",
            ) from None

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._body.close()
        super().close()
