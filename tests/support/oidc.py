"""A real OIDC provider in tests: ``oidc-provider-mock`` started as a process on 127.0.0.1 with a
free port, and a recording front before it (:class:`support.proxy.Recorder`) so a test sees the
authorization and token requests the proxy makes.

The mock takes its issuer from the ``Host`` header (``../shared/notes/dependencies.md``): the front
passes the browser's ``Host`` on, so every URL the mock names is the front's, and the issuer the
proxy is configured with is the front's URL. The mock does not enforce PKCE; the tests check it
on the requests the front records.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["free_port", "running_oidc_mock", "set_user"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now (the system's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command() -> list[str]:
    script = Path(sys.executable).with_name("oidc-provider-mock")
    if script.exists():
        return [str(script)]
    found = shutil.which("oidc-provider-mock")
    if found is None:
        raise AssertionError("oidc-provider-mock is not installed (a dev dependency)")
    return [found]


@contextmanager
def running_oidc_mock() -> Iterator[str]:
    """``oidc-provider-mock`` on 127.0.0.1 (its URL, no trailing slash), stopped on exit."""
    port = free_port()
    process = subprocess.Popen(
        [*_command(), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise AssertionError(f"oidc-provider-mock exited: {process.stderr.read() if process.stderr else ''}")
            try:
                with urllib.request.urlopen(url + "/.well-known/openid-configuration", timeout=2) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("oidc-provider-mock did not start within 30 s") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def set_user(provider: str, subject: str, claims: dict[str, object]) -> None:
    """Give the mock's user ``subject`` these ``claims`` (``PUT /users/<sub>``)."""
    request = urllib.request.Request(
        f"{provider}/users/{subject}",
        data=json.dumps(claims).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204, response.status
