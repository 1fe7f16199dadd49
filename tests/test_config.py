from __future__ import annotations

from pathlib import Path

import pytest

from reviewtrail.config import load_settings
from reviewtrail.errors import ConfigError


def test_defaults(tmp_path: Path) -> None:
    s = load_settings(env={}, cwd=tmp_path)
    assert s.store == tmp_path / ".reviewtrail"
    assert s.database_url == f"sqlite:///{tmp_path / '.reviewtrail' / 'ledger.sqlite'}"
    assert s.config_file is None


def test_toml_in_a_parent_folder_and_env_precedence(tmp_path: Path) -> None:
    (tmp_path / "reviewtrail.toml").write_text('store = "data/rt"\ndatabase_url = "postgresql://u@h/db"\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    s = load_settings(env={}, cwd=sub)
    assert s.store == tmp_path / "data" / "rt"
    assert s.database_url == "postgresql://u@h/db"
    s = load_settings(env={"REVIEWTRAIL_STORE": "elsewhere", "REVIEWTRAIL_DATABASE_URL": "memory:"}, cwd=sub)
    assert s.store == sub / "elsewhere"
    assert s.database_url == "memory:"


def test_unknown_or_bad_keys_are_named(tmp_path: Path) -> None:
    (tmp_path / "reviewtrail.toml").write_text('stroe = "x"\n')
    with pytest.raises(ConfigError, match="stroe"):
        load_settings(env={}, cwd=tmp_path)
    (tmp_path / "reviewtrail.toml").write_text("store = 3\n")
    with pytest.raises(ConfigError) as err:
        load_settings(env={}, cwd=tmp_path)
    assert err.value.field == "store"
    (tmp_path / "reviewtrail.toml").write_text("store = \n")
    with pytest.raises(ConfigError):
        load_settings(env={}, cwd=tmp_path)


def test_the_database_url_is_printed_without_its_password(tmp_path: Path) -> None:
    from reviewtrail.config import Settings

    settings = Settings(store=tmp_path, database_url="postgresql://alice:s3cret@db.example:5432/rt")
    assert "s3cret" not in settings.database_url_redacted
    assert settings.database_url_redacted.startswith("postgresql://alice:")
    assert settings.database_url_redacted.endswith("@db.example:5432/rt")
