import pytest

from kernel.env import ConfigError, env_bool, env_int, env_list, parse_database_url


def test_env_bool_reads_common_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG") is True
    monkeypatch.setenv("FLAG", "off")
    assert env_bool("FLAG", default=True) is False


def test_env_bool_rejects_garbage_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ConfigError, match="FLAG='maybe' is not a boolean"):
        env_bool("FLAG")


def test_env_int_default_bounds_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("N", raising=False)
    assert env_int("N", 7) == 7
    monkeypatch.setenv("N", "12")
    assert env_int("N", 7, minimum=10) == 12
    monkeypatch.setenv("N", "3")
    with pytest.raises(ConfigError, match="N=3 must be >= 10"):
        env_int("N", 7, minimum=10)
    monkeypatch.setenv("N", "x")
    with pytest.raises(ConfigError, match="not an integer"):
        env_int("N", 7)


def test_env_list_splits_and_trims(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTS", " a.example , b.example,,")
    assert env_list("HOSTS") == ["a.example", "b.example"]
    monkeypatch.delenv("HOSTS")
    assert env_list("HOSTS", ["x"]) == ["x"]


def test_parse_postgres_url() -> None:
    cfg = parse_database_url("postgres://loja:s%40nha@db:5433/shop?sslmode=require")
    assert (cfg.engine, cfg.name, cfg.user, cfg.password, cfg.host, cfg.port) == (
        "django.db.backends.postgresql",
        "shop",
        "loja",
        "s@nha",
        "db",
        "5433",
    )
    assert cfg.options == {"sslmode": "require"}


def test_parse_sqlite_relative_and_absolute() -> None:
    assert parse_database_url("sqlite:///var/x.sqlite3").name == "var/x.sqlite3"
    assert parse_database_url("sqlite:////tmp/x.sqlite3").name == "/tmp/x.sqlite3"


@pytest.mark.parametrize("url", ["mysql://h/db", "postgres://h/", "sqlite://"])
def test_parse_database_url_rejects_unusable(url: str) -> None:
    with pytest.raises(ConfigError):
        parse_database_url(url)
