"""The settings, read once at the edge (the command line, later the web apps) and passed down.

Where the store and the ledger live: environment (``REVIEWTRAIL_STORE``,
``REVIEWTRAIL_DATABASE_URL``, ``REVIEWTRAIL_CAS_URL``), then the nearest ``reviewtrail.toml``
in the current folder or its parents (keys ``store``, ``database_url`` and ``cas_url``; a
relative ``store`` is taken relative to the file), then the defaults: ``./.reviewtrail``,
SQLite inside the store and the objects in the store's folder (``cas_url`` None). An
``s3://bucket/prefix`` CAS URL takes its credentials and endpoint from the usual AWS settings
(:class:`S3Settings`: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_ENDPOINT_URL``, ``AWS_REGION``/``AWS_DEFAULT_REGION``), read here like every other setting.
The Reviewer Specialist's tier: ``REVIEWTRAIL_REVIEWER``,
then the file's ``reviewer`` key, else off. Everything else comes from the environment only:
the reviewer's LLM (:class:`ReviewerSettings`), reviewer-call traces (:class:`TraceSettings`)
and the project of sessions and artifacts (``REVIEWTRAIL_PROJECT``). Who a human-review decision
is by (:func:`reviewer_id_setting`): ``REVIEWTRAIL_REVIEWER_ID``, then ``reviewer_id`` in the
user's own configuration (``$XDG_CONFIG_HOME/reviewtrail/config.toml``, default
``~/.config/reviewtrail/config.toml``), never the project's file, which a team shares. The same
holds for the private key every record a process appends is signed with
(:attr:`Settings.signing_key`): ``REVIEWTRAIL_SIGNING_KEY``, then ``signing_key`` in the user's
own configuration (relative to that file's folder).

Nothing below this module reads the environment: domain functions take these values from
their callers. The values are kept as given; each is checked where it is used, naming its
variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reviewtrail._value import Value, field
from reviewtrail.errors import ConfigError

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_STORE",
    "STORE_MARKER",
    "ReviewerSettings",
    "S3Settings",
    "Settings",
    "TraceSettings",
    "find_config_file",
    "load_settings",
    "reviewer_id_setting",
    "reviewer_settings",
    "s3_settings",
    "signing_key_setting",
    "sqlite_path",
    "trace_settings",
    "user_config_file",
]

CONFIG_FILE = "reviewtrail.toml"
STORE_MARKER = "reviewtrail-store.json"
DEFAULT_STORE = ".reviewtrail"
_KEYS = {"store", "database_url", "cas_url", "reviewer"}
_USER_KEYS = {"reviewer_id", "signing_key"}
# Keys a project's file may not hold: they say who writes, and a team shares that file.
_PERSONAL_KEYS = {
    "reviewer_id": "it cannot say who decides; set it in your user configuration "
    "(~/.config/reviewtrail/config.toml) or REVIEWTRAIL_REVIEWER_ID",
    "signing_key": "it cannot hold a writer's private key; set it in your user configuration "
    "(~/.config/reviewtrail/config.toml) or REVIEWTRAIL_SIGNING_KEY",
}
USER_CONFIG = Path("reviewtrail") / "config.toml"


class ReviewerSettings(Value):
    """The Reviewer Specialist: its tier and, for Smart and Deep, the LLM it calls."""

    tier: str | None = None  # REVIEWTRAIL_REVIEWER or ``reviewer`` in the file: off (None), quick, smart, deep
    backend: str | None = None  # REVIEWTRAIL_REVIEWER_BACKEND: openai, anthropic
    model: str | None = None  # REVIEWTRAIL_REVIEWER_MODEL
    base_url: str | None = None  # REVIEWTRAIL_REVIEWER_BASE_URL (OpenAI-compatible endpoints)
    openai_api_key: str | None = field(default=None, repr=False)  # OPENAI_API_KEY
    anthropic_api_key: str | None = field(default=None, repr=False)  # ANTHROPIC_API_KEY
    executor_model: str | None = None  # REVIEWTRAIL_EXECUTOR_MODEL: the main agent's model, for traces


class TraceSettings(Value):
    """Reviewer-call traces: the mode, the run to join, when a run goes idle, the ARIS checkout."""

    mode: str | None = None  # ARIS_TRACE_MODE: full, meta, off
    run_id: str | None = None  # ARIS_TRACE_RUN_ID
    run_idle_minutes: str | None = None  # ARIS_TRACE_RUN_IDLE_MINUTES (default 30)
    aris_repo: str | None = None  # ARIS_REPO
    home: str | None = None  # HOME: where the global pointer ~/.aris/repo is

    def environ(self) -> dict[str, str]:
        """The settings by variable name, as the trace rules name them in their messages."""
        named = {
            "ARIS_TRACE_MODE": self.mode,
            "ARIS_TRACE_RUN_ID": self.run_id,
            "ARIS_TRACE_RUN_IDLE_MINUTES": self.run_idle_minutes,
            "ARIS_REPO": self.aris_repo,
            "HOME": self.home,
        }
        return {k: v for k, v in named.items() if v is not None}


class S3Settings(Value):
    """Credentials and endpoint of an S3-compatible object store, from the usual AWS variables.

    ``None`` leaves a value to the client library's own defaults (its credential chain)."""

    access_key_id: str | None = None  # AWS_ACCESS_KEY_ID
    secret_access_key: str | None = field(default=None, repr=False)  # AWS_SECRET_ACCESS_KEY
    session_token: str | None = field(default=None, repr=False)  # AWS_SESSION_TOKEN
    endpoint_url: str | None = None  # AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL
    region: str | None = None  # AWS_REGION, then AWS_DEFAULT_REGION


def s3_settings(env: Mapping[str, str]) -> S3Settings:
    """The S3 settings from environment-style ``env``; a blank value is not given."""

    def given(*names: str) -> str | None:
        for name in names:
            value = env.get(name) or ""
            if value.strip():
                return value
        return None

    return S3Settings(
        access_key_id=given("AWS_ACCESS_KEY_ID"),
        secret_access_key=given("AWS_SECRET_ACCESS_KEY"),
        session_token=given("AWS_SESSION_TOKEN"),
        endpoint_url=given("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
        region=given("AWS_REGION", "AWS_DEFAULT_REGION"),
    )


class Settings(Value):
    store: Path
    database_url: str
    config_file: Path | None = None
    # REVIEWTRAIL_CAS_URL or ``cas_url`` in the file: where the objects live; None is the store's folder.
    cas_url: str | None = None
    s3: S3Settings = field(default_factory=S3Settings)
    reviewer: ReviewerSettings = field(default_factory=ReviewerSettings)
    trace: TraceSettings = field(default_factory=TraceSettings)
    project: str | None = None  # REVIEWTRAIL_PROJECT: the project of sessions and artifacts (default "default")
    # REVIEWTRAIL_SIGNING_KEY or ``signing_key`` in the user's configuration: the Ed25519 private key
    # (PEM PKCS#8, owner-readable only) every record this process appends is signed with; None: unsigned.
    signing_key: Path | None = None

    @property
    def store_exists(self) -> bool:
        """Whether ``reviewtrail init`` has created a store at :attr:`store`."""
        return (self.store / STORE_MARKER).is_file()

    @property
    def uses_default_database(self) -> bool:
        return self.database_url == sqlite_url(self.store)

    @property
    def database_url_redacted(self) -> str:
        """:attr:`database_url` with any password replaced, safe to print or log."""
        from reviewtrail._redact import redact_url

        return redact_url(self.database_url)

    def redact(self, text: str) -> str:
        """``text`` with :attr:`database_url` (and its password, wherever it appears alone)
        redacted: a database error's message, safe to print."""
        from reviewtrail._redact import redact_text

        return redact_text(text, self.database_url)


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
    doc = _toml_table(path, _KEYS, CONFIG_FILE, _PERSONAL_KEYS)
    for key, value in doc.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"must be a non-empty string in {path}", field=key)
    return dict(doc)


def _toml_table(path: Path, known: set[str], field: str, personal: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the TOML file ``path`` holds: a file that cannot be read, or that holds a key not
    ``known``, is a :class:`ConfigError` naming ``field``; one of ``personal`` (a project file's)
    names itself and why it is not a project's."""
    import tomllib  # only a project or a user with a configuration file pays for the parser

    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", field=field) from exc
    for key, why in (personal or {}).items():
        if key in doc:
            raise ConfigError(f"{key} in {path}: a project's file is shared by its team, so {why}", field=key)
    unknown = set(doc) - known
    if unknown:
        raise ConfigError(
            f"unknown key(s) {', '.join(sorted(unknown))} in {path}; known: {', '.join(sorted(known))}", field=field
        )
    return doc


def reviewer_settings(env: Mapping[str, str], file_tier: str | None = None) -> ReviewerSettings:
    """The reviewer's settings from environment-style ``env``; a blank tier there leaves ``file_tier``."""
    tier = env.get("REVIEWTRAIL_REVIEWER") or ""
    return ReviewerSettings(
        tier=tier if tier.strip() else file_tier,
        backend=env.get("REVIEWTRAIL_REVIEWER_BACKEND"),
        model=env.get("REVIEWTRAIL_REVIEWER_MODEL"),
        base_url=env.get("REVIEWTRAIL_REVIEWER_BASE_URL"),
        openai_api_key=env.get("OPENAI_API_KEY"),
        anthropic_api_key=env.get("ANTHROPIC_API_KEY"),
        executor_model=env.get("REVIEWTRAIL_EXECUTOR_MODEL"),
    )


def user_config_file(env: Mapping[str, str]) -> Path | None:
    """The user's own configuration file (it may not exist): ``$XDG_CONFIG_HOME/reviewtrail/config.toml``,
    else ``$HOME/.config/reviewtrail/config.toml``; None when neither variable is set."""
    base = env.get("XDG_CONFIG_HOME") or ""
    if base.strip():
        return Path(base) / USER_CONFIG
    home = env.get("HOME") or ""
    return Path(home) / ".config" / USER_CONFIG if home.strip() else None


def reviewer_id_setting(env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The reviewer id a human-review decision records, and where it came from:
    ``REVIEWTRAIL_REVIEWER_ID`` (blank is not given), else ``reviewer_id`` in the user's own
    configuration file, else ``(None, "")``. A user file that cannot be read, or holds another
    key, is a :class:`ConfigError` naming it."""
    env = os.environ if env is None else env
    given = env.get("REVIEWTRAIL_REVIEWER_ID") or ""
    if given.strip():
        return given, "REVIEWTRAIL_REVIEWER_ID"
    path, doc = _user_config(env, "reviewer_id")
    value = doc.get("reviewer_id")
    if value is None or path is None:
        return None, ""
    if not isinstance(value, str):
        raise ConfigError(f"must be a string in {path}", field="reviewer_id")
    return value, str(path)


def signing_key_setting(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """The private key file records are signed with: ``REVIEWTRAIL_SIGNING_KEY`` (relative to
    ``cwd``; blank is not given), else ``signing_key`` in the user's own configuration file
    (relative to its folder, ``~`` expanded), else None. The file itself is read and checked when
    the first record is signed."""
    env = os.environ if env is None else env
    given = env.get("REVIEWTRAIL_SIGNING_KEY") or ""
    if given.strip():
        path = Path(given).expanduser()
        return path if path.is_absolute() else (Path.cwd() if cwd is None else cwd) / path
    config, doc = _user_config(env, "signing_key")
    value = doc.get("signing_key")
    if value is None or config is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"must be a non-empty string (a file path) in {config}", field="signing_key")
    path = Path(value).expanduser()
    return path if path.is_absolute() else config.parent / path


def _user_config(env: Mapping[str, str], field: str) -> tuple[Path | None, dict[str, Any]]:
    """The user's own configuration file and what it holds (nothing when there is none); a file
    that cannot be read, or holds a key other than :data:`_USER_KEYS`, is a :class:`ConfigError`
    naming ``field``."""
    path = user_config_file(env)
    if path is None or not path.is_file():
        return None, {}
    return path, _toml_table(path, _USER_KEYS, field)


def trace_settings(env: Mapping[str, str]) -> TraceSettings:
    """The trace settings from environment-style ``env``."""
    return TraceSettings(
        mode=env.get("ARIS_TRACE_MODE"),
        run_id=env.get("ARIS_TRACE_RUN_ID"),
        run_idle_minutes=env.get("ARIS_TRACE_RUN_IDLE_MINUTES"),
        aris_repo=env.get("ARIS_REPO"),
        home=env.get("HOME"),
    )


def load_settings(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
    """Every setting, read once: ``env`` (default: the process environment) over ``reviewtrail.toml``."""
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
    cas_url = (env.get("REVIEWTRAIL_CAS_URL") or "").strip() or file_values.get("cas_url") or None
    return Settings(
        store=store,
        database_url=url,
        config_file=config_file,
        cas_url=cas_url,
        s3=s3_settings(env),
        reviewer=reviewer_settings(env, file_values.get("reviewer")),
        trace=trace_settings(env),
        project=env.get("REVIEWTRAIL_PROJECT"),
        signing_key=signing_key_setting(env, cwd),
    )
