"""The kernel host process: ``python -m reviewtrail.cli.runs._kernel_host``, started (detached) by
``reviewtrail run --kernel`` when the kernel has no live host. It reads its configuration on
standard input (never its command line: ``--env`` values may be secrets), opens the store as
the command that started it would, and serves the kernel
(:func:`reviewtrail.provenance.kernels.serve_kernel_host`; docs/architecture.md, "Kernel hosts")."""

from __future__ import annotations

__all__ = ["host_command", "main"]


def host_command() -> list[str]:
    """The command that starts a kernel host: this module, run by this interpreter, without the
    current folder on its import path (``-P``)."""
    import sys

    return [sys.executable, "-P", "-m", "reviewtrail.cli.runs._kernel_host"]


def main() -> None:
    import os
    import sys

    from reviewtrail.app import open_store
    from reviewtrail.errors import ReviewtrailError
    from reviewtrail.provenance.kernels import KernelHostConfig, serve_kernel_host

    data = sys.stdin.buffer.read()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        config = KernelHostConfig.from_bytes(data)
    except ReviewtrailError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(exc.exit_code)
    sys.exit(serve_kernel_host(open_store, config))


if __name__ == "__main__":
    main()
