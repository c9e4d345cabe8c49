"""What the demo says when its model server fails: what failed, where, and what to try.

Shared by the terminal demo (one line on standard error) and the web demo (an ``error``
message to the page).  The text names the demo's own options (``--base-url``,
``--timeout``...), not the library's parameters.
"""

from __future__ import annotations

import socket

from ..llm.base import ModelError

__all__ = ["model_failure"]


# What to check after an HTTP error status, by status (the first digit for the rest).
_HTTP_HINTS = {
    401: "check --api-key",
    403: "check --api-key",
    404: "check --base-url (it usually ends in /v1) and --model",
    429: "the server is busy or over its quota; try again later",
}
_HTTP_CLASS_HINTS = {
    4: "the server refused the request; check --model",
    5: "the server failed; see its log, or try again",
}


def _unreachable(exc: BaseException) -> str | None:
    """Why no connection was made, read from the OS error under ``exc``; None if none is.

    The client wraps the socket's error in its own exceptions: the standard library's
    types at the bottom of the chain say it plainly, whichever client raised it.
    """
    found: list[OSError] = []
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError):
            found.append(cause)
        cause = cause.__cause__ or cause.__context__
    for error in found:
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        if isinstance(error, socket.gaierror):
            return "unknown host name"
        if isinstance(error, TimeoutError):
            return "timed out"
    if found:
        return found[0].strerror or str(found[0]) or type(found[0]).__name__
    return None


def model_failure(exc: ModelError, base_url: str | None, timeout: float | None) -> str:
    """One line about a model server that failed the demo: what, where, and what to try."""
    server = f"the model server at {base_url}"
    if timeout is not None and "reply_timeout" in str(exc):
        # The demo's --timeout is the model's reply_timeout: name the option, not the
        # library's parameter.
        return (
            f"{server} did not finish within --timeout {timeout:g} s (a server that hangs, "
            "or a reply that takes longer); raise --timeout, or see the server's log"
        )
    if exc.status_code is not None:
        hint = _HTTP_HINTS.get(exc.status_code) or _HTTP_CLASS_HINTS.get(
            exc.status_code // 100, "check --base-url and --model"
        )
        return f"{server} answered HTTP {exc.status_code}: {exc.message}; {hint}"
    why = _unreachable(exc)
    if why is not None:
        return f"{server} could not be reached ({why}); is it running? check --base-url"
    # A reply cut short (a dropped connection, a server that crashed mid-reply), or no
    # reply in time: the message says which.
    return f"{server} failed: {exc}; try again, or see the server's log"
