"""Command-line interface. Entry point: :func:`main`."""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    from reviewtrail.cli import _fast

    _fast.main()
