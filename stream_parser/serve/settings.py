"""How the proxy rewrites replies: one frozen record, the same for the server and the transport.

Every field has a command-line option of ``stream-parser serve`` and an environment
variable (:mod:`stream_parser.serve.config`); the in-process transport takes the record
as it is.  Nothing here loads a server library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ProxySettings"]


@dataclass(frozen=True)
class ProxySettings:
    """What the proxy does with a chat completion.

    Attributes:
        dialect: ``"auto"`` (the dialect of the request's ``model``, by
            ``dialect_for_model``; a name it does not know is passed through unparsed)
            or a dialect's name (``"hermes"``, ``"qwen3_coder"``...).
        bad_calls: a call that cannot run goes out as content: its text as the model
            wrote it (``"text"``), or one line saying what was wrong (``"error"``).
        raw_output: ask the upstream for special tokens (``skip_special_tokens: false``
            ...) for a dialect whose markers are special tokens.
        render_tools: for a server that ignores ``tools``: write them into the
            instructions in the dialect's words, send no ``tools``, and rewrite the
            history's calls and results as the dialect writes them.
        instructions_role: where ``render_tools`` writes the tools: the system message,
            or the start of the first user message.
        start_in_reasoning: whether a reply starts inside reasoning: ``"auto"`` (from
            the model and the request's ``chat_template_kwargs``), ``"yes"`` or ``"no"``.
        reasoning_field: the delta field the reasoning is sent in.
    """

    dialect: str = "auto"
    bad_calls: Literal["text", "error"] = "text"
    raw_output: bool = True
    render_tools: bool = False
    instructions_role: Literal["system", "user"] = "system"
    start_in_reasoning: Literal["auto", "yes", "no"] = "auto"
    reasoning_field: str = "reasoning_content"
