"""The proxy's configuration: options, environment variables, and the workers' factory."""

from __future__ import annotations

import dataclasses
import json
import typing

import httpx
import pytest

from stream_parser.cli import _argv, main
from stream_parser.cli._serve import _config
from stream_parser.errors import ConfigError
from stream_parser.serve.config import DEFAULT_TIMEOUT, ServeConfig
from stream_parser.serve.settings import ProxySettings

UPSTREAM = "http://127.0.0.1:9/v1"


def options(*argv: str) -> ServeConfig:
    return _config(_argv.build_parser().parse_args(["serve", *argv]))


def test_the_environment_carries_every_setting_to_a_worker() -> None:
    config = ServeConfig(
        UPSTREAM,
        ProxySettings(
            dialect="hermes",
            bad_calls="error",
            raw_output=False,
            render_tools=True,
            instructions_role="user",
            start_in_reasoning="no",
            reasoning_field="reasoning",
        ),
        api_key="sk-a",
        upstream_api_key="sk-b",
        timeout=2.5,
    )
    assert ServeConfig.from_environ(config.to_environ()) == config
    plain = ServeConfig(UPSTREAM)
    assert ServeConfig.from_environ(plain.to_environ()) == plain
    # Written in full: variables already set cannot leak into a worker's config.
    stale = {**config.to_environ(), **plain.to_environ()}
    assert ServeConfig.from_environ(stale) == plain


def test_options_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAM_PARSER_UPSTREAM", UPSTREAM)
    monkeypatch.setenv("STREAM_PARSER_DIALECT", "hermes")
    monkeypatch.setenv("STREAM_PARSER_RAW_OUTPUT", "false")
    monkeypatch.setenv("STREAM_PARSER_API_KEY", "sk-env")
    from_env = options()
    assert from_env.upstream == UPSTREAM
    assert (from_env.proxy.dialect, from_env.proxy.raw_output) == ("hermes", False)
    assert from_env.api_key == "sk-env"
    given = options("--upstream", "https://example.com/v1", "--dialect", "xml", "--timeout", "3")
    assert (given.upstream, given.proxy.dialect, given.timeout) == (
        "https://example.com/v1",
        "xml",
        3.0,
    )
    assert given.proxy.raw_output is False  # not given: the environment's


def test_the_defaults() -> None:
    config = options("--upstream", UPSTREAM)
    assert config == ServeConfig(UPSTREAM)
    assert config.timeout == DEFAULT_TIMEOUT == 600
    assert config.proxy == ProxySettings()
    flags = options(
        "--upstream", UPSTREAM, "--no-raw-output", "--render-tools",
        "--instructions-role", "user", "--bad-calls", "error", "--start-in-reasoning", "yes",
    )  # fmt: skip
    assert flags.proxy == ProxySettings(
        raw_output=False,
        render_tools=True,
        instructions_role="user",
        bad_calls="error",
        start_in_reasoning="yes",
    )


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, "no upstream"),
        ({"STREAM_PARSER_UPSTREAM": "localhost:8000"}, "http:// or https://"),
        ({"STREAM_PARSER_UPSTREAM": UPSTREAM, "STREAM_PARSER_TIMEOUT": "soon"}, "seconds"),
        ({"STREAM_PARSER_UPSTREAM": UPSTREAM, "STREAM_PARSER_TIMEOUT": "0"}, "positive"),
        ({"STREAM_PARSER_UPSTREAM": UPSTREAM, "STREAM_PARSER_RAW_OUTPUT": "maybe"}, "1 or 0"),
        ({"STREAM_PARSER_UPSTREAM": UPSTREAM, "STREAM_PARSER_BAD_CALLS": "drop"}, "text, error"),
        ({"STREAM_PARSER_UPSTREAM": UPSTREAM, "STREAM_PARSER_DIALECT": "klingon"}, "klingon"),
    ],
)
def test_a_wrong_setting_is_a_config_error(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ServeConfig.from_environ(environ)


def test_the_command_line_offers_what_the_settings_accept() -> None:
    hints = typing.get_type_hints(ProxySettings)
    assert typing.get_args(hints["bad_calls"]) == _argv.BAD_CALLS
    assert typing.get_args(hints["instructions_role"]) == _argv.INSTRUCTIONS_ROLES
    assert typing.get_args(hints["start_in_reasoning"]) == _argv.START_IN_REASONING
    # Each setting has an option or (reasoning_field) its environment variable only.
    serve = _argv.build_parser().parse_args(["serve"])
    for item in dataclasses.fields(ProxySettings):
        assert hasattr(serve, item.name) or item.name == "reasoning_field", item.name


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve"], "no upstream"),
        (["serve", "--upstream", UPSTREAM, "--dialect", "klingon"], "unknown dialect 'klingon'"),
        (["serve", "--upstream", "ftp://x"], "http:// or https://"),
    ],
)
def test_the_command_reports_a_wrong_option_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.delenv("STREAM_PARSER_UPSTREAM", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("stream-parser: error: ") and message in err
    assert err.count("\n") == 1


def test_the_factory_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_parser.serve import create_app

    config = ServeConfig(UPSTREAM, ProxySettings(dialect="xml"), api_key="sk-a", timeout=7)
    for name, value in config.to_environ().items():
        monkeypatch.setenv(name, value)
    assert create_app().state.config == config


def test_several_workers_serve_with_the_commands_settings(proxy, upstream) -> None:
    from tests.serve.upstream import Reply

    server = proxy("--workers", "2", "--api-key", "sk-proxy")
    key = upstream.add(Reply(json={"object": "list", "data": []}))
    headers = {"x-reply": key}
    assert httpx.get(server.url + "/models", headers=headers).status_code == 401
    ok = httpx.get(server.url + "/models", headers={**headers, "authorization": "Bearer sk-proxy"})
    assert ok.json() == {"object": "list", "data": []}


def test_the_dockerfile_runs_the_command_on_its_default_port() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "Dockerfile").read_text(encoding="utf-8")
    port = _argv.build_parser().parse_args(["serve"]).port
    (cmd,) = [json.loads(line[4:]) for line in text.splitlines() if line.startswith("CMD ")]
    assert cmd[:2] == ["stream-parser", "serve"]
    assert cmd[cmd.index("--port") + 1] == str(port)
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0"  # reachable from outside the container
    assert f"EXPOSE {port}" in text
    assert f"127.0.0.1:{port}/healthz" in text
    assert "'.[serve]'" in text


def test_a_missing_extra_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    assert main(["serve", "--upstream", UPSTREAM]) == 2
    err = capsys.readouterr().err
    assert "install the serve extra" in err and "missing: uvicorn" in err
    assert err.count("\n") == 1
