"""What one ``stream-parser serve`` process is told: the upstream, the keys, the timeout.

Theory of operation.  :class:`ServeConfig` is the whole configuration of the proxy, one
frozen record read by every entry point: the command line builds it from its options,
:func:`~stream_parser.serve.app.create_app` takes it, and each of several uvicorn workers
(``--workers N``), which builds its own app in its own process, reads it back from the
environment (:meth:`ServeConfig.to_environ` / :meth:`ServeConfig.from_environ`).  The same
variables configure a container (``docker run -e STREAM_PARSER_UPSTREAM=...``) or a server
started by hand (``uvicorn --factory stream_parser.serve:create_app``).

This module imports neither Starlette nor uvicorn: the command line reads its options
into a configuration (and reports a mistake in them) before the server's dependencies load.
"""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from ..core.kit import BUILTIN_DIALECTS
from ..errors import ConfigError
from .settings import ProxySettings

__all__ = ["DEFAULT_TIMEOUT", "ENV_PREFIX", "ServeConfig"]

ENV_PREFIX: Final = "STREAM_PARSER_"
"""The environment variables' prefix: ``STREAM_PARSER_UPSTREAM``, ``STREAM_PARSER_DIALECT``..."""

DEFAULT_TIMEOUT: Final = 600.0
"""Seconds to wait for the upstream's first byte, and for each later one (the SDK's default)."""

# The spellings a boolean variable may take, as most tools read them.
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


@dataclass(frozen=True)
class ServeConfig:
    """The configuration of the proxy (``stream-parser serve``).

    Attributes:
        upstream: the OpenAI-compatible server's base URL, as a client would be given it
            (``http://localhost:8000/v1``).  The proxy's ``/v1/...`` maps to it; other
            paths go to the same host unchanged.
        proxy: how replies are rewritten (dialect, bad calls, raw output...).
        api_key: when set, the proxy requires ``Authorization: Bearer <api_key>`` from
            its clients and does not forward it.
        upstream_api_key: sent upstream as ``Authorization: Bearer ...`` instead of the
            client's header.
        timeout: seconds to wait for the upstream's first byte (a 504 after it) and for
            each later one (an error event in the stream after it).
    """

    upstream: str
    proxy: ProxySettings = field(default_factory=ProxySettings)
    api_key: str | None = None
    upstream_api_key: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(
                f"the upstream must be an http:// or https:// URL such as "
                f"http://localhost:8000/v1, not {self.upstream!r}"
            )
        if not self.timeout > 0:
            raise ConfigError(
                f"the timeout must be a positive number of seconds, not {self.timeout}"
            )
        dialect = self.proxy.dialect
        if dialect != "auto" and dialect not in BUILTIN_DIALECTS:
            known = ", ".join(sorted(BUILTIN_DIALECTS))
            raise ConfigError(f"unknown dialect {dialect!r}: give auto or one of {known}")
        for name in ("api_key", "upstream_api_key"):
            if getattr(self, name) == "":
                object.__setattr__(self, name, None)  # an empty variable means none

    def to_environ(self) -> dict[str, str]:
        """The environment variables that :meth:`from_environ` reads back into this config.

        Every setting is written, a missing key as an empty variable, so that variables
        already in the environment cannot change what a worker reads.
        """
        environ = {
            f"{ENV_PREFIX}UPSTREAM": self.upstream,
            f"{ENV_PREFIX}API_KEY": self.api_key or "",
            f"{ENV_PREFIX}UPSTREAM_API_KEY": self.upstream_api_key or "",
            f"{ENV_PREFIX}TIMEOUT": repr(self.timeout),
        }
        for item in dataclasses.fields(ProxySettings):
            value = getattr(self.proxy, item.name)
            written = ("1" if value else "0") if isinstance(value, bool) else str(value)
            environ[ENV_PREFIX + item.name.upper()] = written
        return environ

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str] | None = None, **overrides: Any
    ) -> ServeConfig:
        """A config read from environment variables (``os.environ`` by default).

        ``STREAM_PARSER_UPSTREAM`` (required unless given in ``overrides``),
        ``STREAM_PARSER_API_KEY``, ``STREAM_PARSER_UPSTREAM_API_KEY``,
        ``STREAM_PARSER_TIMEOUT``, and one variable per field of :class:`ProxySettings`
        (``STREAM_PARSER_DIALECT``, ``STREAM_PARSER_BAD_CALLS``,
        ``STREAM_PARSER_RAW_OUTPUT`` (``1``/``0``), ``STREAM_PARSER_RENDER_TOOLS``...).

        Args:
            environ: the variables; ``os.environ`` when None.
            **overrides: values that win over the environment: ``upstream``, ``api_key``,
                ``upstream_api_key``, ``timeout`` and any field of :class:`ProxySettings`
                (a None value is no override).

        Raises:
            ConfigError: a variable or an override holds an invalid value, or no upstream
                is given.
        """
        env = os.environ if environ is None else environ
        given = {key: value for key, value in overrides.items() if value is not None}
        proxy_names = {item.name for item in dataclasses.fields(ProxySettings)}
        unknown = set(given) - proxy_names - {"upstream", "api_key", "upstream_api_key", "timeout"}
        if unknown:
            raise ConfigError(f"unknown serve settings: {', '.join(sorted(unknown))}")

        def read(name: str) -> str | None:
            return env.get(ENV_PREFIX + name.upper())

        upstream = given.get("upstream", read("upstream"))
        if not upstream:
            raise ConfigError(
                "no upstream: give --upstream URL (or set STREAM_PARSER_UPSTREAM), "
                "the OpenAI-compatible server's base URL such as http://localhost:8000/v1"
            )
        timeout: Any = given.get("timeout", read("timeout"))
        if timeout is None:
            timeout = DEFAULT_TIMEOUT
        try:
            timeout = float(timeout)
        except ValueError:
            raise ConfigError(
                f"{ENV_PREFIX}TIMEOUT must be a number of seconds, not {timeout!r}"
            ) from None
        proxy: dict[str, Any] = {}
        hints = typing.get_type_hints(ProxySettings)
        for name in sorted(proxy_names):
            if name in given:
                proxy[name] = given[name]
            elif (text := read(name)) is not None:
                proxy[name] = _setting(name, text, hints[name])
        return cls(
            upstream=upstream,
            proxy=ProxySettings(**proxy),
            api_key=given.get("api_key", read("api_key")),
            upstream_api_key=given.get("upstream_api_key", read("upstream_api_key")),
            timeout=timeout,
        )


def _setting(name: str, text: str, hint: Any) -> Any:
    """The value of one :class:`ProxySettings` field read from its variable's text."""
    variable = ENV_PREFIX + name.upper()
    if hint is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
        raise ConfigError(f"{variable} must be 1 or 0 (true or false), not {text!r}")
    choices = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else ()
    if choices and text not in choices:
        raise ConfigError(f"{variable} must be one of {', '.join(choices)}, not {text!r}")
    return text
