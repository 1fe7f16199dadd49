"""What a sandbox accepts: the one place its inputs are checked, without I/O.

Every way code reaches a sandbox (a one-shot run, a persistent kernel, a session's run or
kernel) checks its inputs with :func:`check_sandbox_input`, before anything is written or
started. The rules, in the order they are checked (the first problem is the error, naming
its field):

* ``lang``: ``python`` or ``bash``;
* ``code``: text without NUL bytes or lone surrogates (it is sent as UTF-8);
* ``env``: names ``[A-Za-z_][A-Za-z0-9_]*``, values strings without NUL bytes;
* ``timeout``: a finite number of seconds > 0 (not a bool);
* ``network``: ``none`` or ``allowlist``;
* ``max_output``: a byte count >= 0 (not a bool);
* ``cwd``: a path that stays inside ``/workspace`` (absolute, or relative to it);
* the network policy: ``--allow``/``--allow-resolve`` entries need ``allowlist`` mode, and
  each must parse (:class:`NetPolicy`);
* ``limits``: a :class:`ResourceLimits`.

A caller passes only the inputs it has; the others are not checked.
"""

from __future__ import annotations

import enum
import math
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast

from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance.sandbox._limits import ResourceLimits
from reviewtrail.provenance.sandbox._netproxy_rules import NetPolicy

__all__ = [
    "ABSENT",
    "LANGUAGES",
    "NETWORKS",
    "SANDBOX_WORKSPACE",
    "CheckedInput",
    "Language",
    "Network",
    "check_code",
    "check_env",
    "check_lang",
    "check_max_output",
    "check_network",
    "check_sandbox_input",
    "check_timeout",
    "net_policy",
    "sandbox_cwd",
]

Language = Literal["python", "bash"]
Network = Literal["none", "allowlist"]
LANGUAGES: Final = ("python", "bash")
NETWORKS: Final = ("none", "allowlist")
SANDBOX_WORKSPACE: Final = "/workspace"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Absent(enum.Enum):
    ABSENT = "absent"


#: An input the caller does not have (so it is not checked).
ABSENT: Final = _Absent.ABSENT


@dataclass(frozen=True)
class CheckedInput:
    """What the checks derive: the code's bytes, the resolved working directory, the network
    policy (None in mode ``none``); each None when its input was not given."""

    source: bytes | None = None
    cwd: str | None = None
    policy: NetPolicy | None = None


def check_lang(lang: object) -> Language:
    if isinstance(lang, str) and lang in LANGUAGES:
        return cast(Language, lang)
    raise InvalidInputError(f"{lang!r} is not a supported language; use python or bash", field="lang")


def check_code(code: str) -> bytes:
    """The code as UTF-8; NUL bytes and lone surrogates are rejected."""
    if not isinstance(code, str):
        raise InvalidInputError("must be text", field="code")
    if "\x00" in code:
        raise InvalidInputError("contains a NUL byte", field="code")
    try:
        return code.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"is not valid Unicode text ({exc.reason})", field="code") from None


def check_env(env: Mapping[str, str]) -> None:
    for key, value in env.items():
        if not isinstance(key, str) or _ENV_NAME.fullmatch(key) is None:
            raise InvalidInputError(f"{key!r} is not a variable name", field="env")
        if not isinstance(value, str) or "\x00" in value:
            raise InvalidInputError(f"the value of {key} must be a string without NUL bytes", field="env")


def check_timeout(timeout: object) -> float:
    """A finite number of seconds > 0 (a bool is not a number here)."""
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0 and math.isfinite(timeout):
        return float(timeout)
    raise InvalidInputError("must be a finite number of seconds > 0", field="timeout")


def check_network(network: object) -> Network:
    if isinstance(network, str) and network in NETWORKS:
        return cast(Network, network)
    raise InvalidInputError(f"{network!r} is not a network policy; use none or allowlist", field="network")


def check_max_output(max_output: object) -> int:
    if isinstance(max_output, bool) or not isinstance(max_output, int) or max_output < 0:
        raise InvalidInputError("must be a byte count >= 0", field="max_output")
    return max_output


def net_policy(network: str, allowlist: Sequence[str], resolve: Mapping[str, str]) -> NetPolicy | None:
    """The allowlist policy, or None in mode ``none`` (where an allowlist is an error)."""
    if isinstance(allowlist, str):
        raise InvalidInputError("must be a list of host or host:port entries", field="allow")
    if network != "allowlist":
        if allowlist or resolve:
            raise InvalidInputError("--allow and --allow-resolve need --network allowlist", field="allow")
        return None
    return NetPolicy.parse(allowlist, resolve)


def sandbox_cwd(cwd: str) -> str:
    """Resolve ``cwd`` (absolute, or relative to /workspace) lexically; it must stay inside /workspace."""
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        raise InvalidInputError("must be a path inside /workspace", field="cwd")
    path = posixpath.normpath(posixpath.join(SANDBOX_WORKSPACE, cwd))
    if path != SANDBOX_WORKSPACE and not path.startswith(SANDBOX_WORKSPACE + "/"):
        raise InvalidInputError(f"{cwd!r} is outside /workspace", field="cwd")
    return path


def check_sandbox_input(
    *,
    lang: object = ABSENT,
    code: str | _Absent = ABSENT,
    env: Mapping[str, str] | _Absent = ABSENT,
    timeout: object = ABSENT,
    network: object = ABSENT,
    max_output: object = ABSENT,
    cwd: str | _Absent = ABSENT,
    allowlist: Sequence[str] = (),
    resolve: Mapping[str, str] | None = None,
    limits: object = ABSENT,
) -> CheckedInput:
    """Check the inputs given, in the module's order; raise :class:`InvalidInputError` naming the
    first bad field. The network policy is checked when ``network`` is given."""
    if lang is not ABSENT:
        check_lang(lang)
    source = None if code is ABSENT else check_code(code)
    if env is not ABSENT:
        check_env(env)
    if timeout is not ABSENT:
        check_timeout(timeout)
    if network is not ABSENT:
        check_network(network)
    if max_output is not ABSENT:
        check_max_output(max_output)
    where = None if cwd is ABSENT else sandbox_cwd(cwd)
    policy = None if network is ABSENT else net_policy(str(network), allowlist, dict(resolve or {}))
    if limits is not ABSENT and not isinstance(limits, ResourceLimits):
        raise InvalidInputError("must be ResourceLimits", field="limits")
    return CheckedInput(source=source, cwd=where, policy=policy)
