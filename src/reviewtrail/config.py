"""Where the store and the ledger live.

Precedence, highest first: environment (``REVIEWTRAIL_STORE``,
``REVIEWTRAIL_DATABASE_URL``), then the nearest ``reviewtrail.toml`` in the
current folder or its parents (keys ``store`` and ``database_url``; a relative
``store`` is taken relative to the file), then the defaults: ``./.reviewtrail``
and SQLite inside the store.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.errors import ConfigError

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_STORE",
    "STORE_MARKER",
    "Settings",
    "find_config_file",
    "load_settings",
    "sqlite_path",
]

CONFIG_FILE = "reviewtrail.toml"
STORE_MARKER = "reviewtrail-store.json"
DEFAULT_STORE = ".reviewtrail"
_KEYS = {"store", "database_url", "reviewer"}


@dataclass(frozen=True)
class Settings:
    store: Path
    database_url: str
    config_file: Path | None = None
    reviewer: str | None = None  # Reviewer Specialist tier: off (default), quick, smart, deep

    @property
    def store_exists(self) -> bool:
        """Whether ``reviewtrail init`` has created a store at :attr:`store`."""
        return (self.store / STORE_MARKER).is_file()

    @property
    def uses_default_database(self) -> bool:
        return self.database_url == sqlite_url(self.store)


def sqlite_url(store: Path) -> str:
    return f"sqlite:///{(store / 'ledger.sqlite').absolute()}"


def sqlite_path(url: str) -> Path | None:
    """The file a ``sqlite:///`` URL names (SQLAlchemy's convention: ``sqlite:///relative.db``,
    ``sqlite:////absolute/path.db``), or None for any other URL."""
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


def find_config_file(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


def _read_toml(path: Path) -> dict[str, str]:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", field=CONFIG_FILE) from exc
    unknown = set(doc) - _KEYS
    if unknown:
        raise ConfigError(
            f"unknown key(s) {', '.join(sorted(unknown))} in {path}; known: {', '.join(sorted(_KEYS))}",
            field=CONFIG_FILE,
        )
    for key, value in doc.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"must be a non-empty string in {path}", field=key)
    return dict(doc)


def load_settings(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    config_file = find_config_file(cwd)
    file_values = _read_toml(config_file) if config_file else {}
    if env.get("REVIEWTRAIL_STORE"):
        store = Path(env["REVIEWTRAIL_STORE"])
        store = store if store.is_absolute() else cwd / store
    elif "store" in file_values and config_file is not None:
        store = config_file.parent / file_values["store"]
    else:
        store = cwd / DEFAULT_STORE
    store = store.absolute()
    url = env.get("REVIEWTRAIL_DATABASE_URL") or file_values.get("database_url") or sqlite_url(store)
    return Settings(store=store, database_url=url, config_file=config_file, reviewer=file_values.get("reviewer"))
