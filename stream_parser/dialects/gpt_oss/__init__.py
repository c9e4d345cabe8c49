r"""The gpt_oss dialect: OpenAI's Harmony format, as gpt-oss models write it.

A gpt-oss reply is a sequence of messages.  The chat template ends the prompt with
``<|start|>assistant``, so a reply usually opens with the first message's channel::

    <|channel|>analysis<|message|>The user wants a.py.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json
    <|message|>{"path": "a.py"}<|call|>

(one line in the stream: no line breaks between the tokens).  A message is a header,
``<|message|>``, its body, and an end token.  The header names the channel
(``analysis``: reasoning; ``commentary``: preambles and calls; ``final``: the answer)
and, for a tool call, the recipient ``to=functions.NAME``, after the channel or before
it (the chat template renders history calls as ``<|start|>assistant
to=functions.NAME<|channel|>commentary json<|message|>``), on any channel (models call
from ``analysis`` too).  A call's body is its JSON arguments and it ends with
``<|call|>``; other messages end with ``<|end|>`` (``<|return|>`` after the answer).

Theory of operation
-------------------

* **Reasoning** is the core's: the dialect registers ``<|channel|>analysis<|message|>``
  (also with the ``<|start|>assistant`` before it, and the ``<|end|>`` of a previous
  message) as thinking tags closed by ``<|end|>`` (:data:`GPT_OSS_THINKING`), so the
  analysis streams as thinking events, however long it is.
* **Everything else** is read by one :class:`HarmonyPlugin` (the kit's reader plugin),
  whose reader ends each block where it says (``Reader.end``) or at ``<|call|>``:

  - a *header* opens at ``<|start|>``, ``<|channel|>`` or ``<|end|><|start|>`` and runs to
    ``<|message|>``.  Without a recipient it is framing (a
    :class:`~stream_parser.core.events.FramingEvent`: never text) and the block ends
    after ``<|message|>``, so the body of a ``final`` or ``commentary`` message streams
    on as ordinary text.  A header that meets a line break, or grows past 512
    characters, was not a header: its text is text;
  - with a recipient the block goes on with the body: the call is announced
    (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a registered tool) and
    the body streams verbatim as
    :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.  The core's
    :class:`~stream_parser.core.kit.JsonScanner` follows the JSON as it arrives
    (constant work per character; the plugin feeds it up to each ``<`` and asks
    whether that ``<`` is inside a string): ``<|call|>`` inside a string is content;
    outside one it ends the call.  Outside a string a ``<`` cannot be JSON, so the body
    ends there too: ``<|end|>`` and ``<|return|>`` (which some models write instead of
    ``<|call|>``) belong to the call, any other token (the next message's
    ``<|start|>``) starts the next block.  Quotes open strings in the whole body, also
    in text before or after the JSON value (a body cut after ``{...}, "x`` is inside a
    string, so it is not a whole call): the scanner is opened with a ``[`` of its own,
    so that the body is always nested in it, and opened afresh when a stray bracket
    closes it;
  - a lone ``<|call|>``, ``<|return|>``, ``<|message|>`` or ``<|constrain|>`` is framing.

When a call closes its body is parsed once and validated by the tool's model (Pydantic's
lax mode, as hermes), giving a :class:`~stream_parser.core.events.ToolCallEvent` or an
error followed by the call's raw text: ``unknown_tool``, ``malformed_tool`` (not one
JSON object, or text after it), ``invalid_params``.  The tool is the recipient without
``functions.``; a name that is not registered but is one with ``json`` glued to it
(``to=functions.shelljson``) is that tool.  A body that is a JSON string holding the
object (the template's ``tojson`` of arguments given as a string) is read too, and a
string given for a field that takes only lists, dicts or models is read as that value.

Servers do not send the ``<|call|>`` stop token, so the last call may end with the
stream: it runs when its body is a complete JSON object and the stream was not cut
(``finish_reason`` ``"length"``, a stream error); otherwise it is ``unclosed_tool``.
Every decision depends on the characters only, never on how they were chunked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ...core.kit import (
    ParsePlugin,
    ThinkingFormat,
    register,
)
from .._base import Dialect
from .harmony import (
    _FUNCTIONS,
    _NAME_FORBIDDEN,
    ANALYSIS_HEADER,
    CALL,
    CHANNEL,
    END,
    MESSAGE,
    START,
    HarmonyPlugin,
    HarmonyRoleHeaderPlugin,
)

__all__ = [
    "ANALYSIS_HEADER",
    "CALL",
    "CHANNEL",
    "CONSTRAIN",
    "END",
    "GPT_OSS_THINKING",
    "MESSAGE",
    "RETURN",
    "START",
    "GptOssDialect",
    "HarmonyPlugin",
    "HarmonyRoleHeaderPlugin",
]


GPT_OSS_THINKING: Final = ThinkingFormat(
    (
        (ANALYSIS_HEADER, END),
        (f"{START}assistant{ANALYSIS_HEADER}", END),
        (f"{END}{START}assistant{ANALYSIS_HEADER}", END),
    )
)
"""Reasoning: an ``analysis`` message (with the header before it, if any) up to ``<|end|>``."""


class GptOssDialect(Dialect):
    """OpenAI Harmony (gpt-oss): calls are messages to ``functions.NAME``.

    Example:
        >>> call = GptOssDialect().format_call("read_file", {"path": "a.py"})
        >>> for part in call.split("<|message|>"):
        ...     print(part)
        <|start|>assistant to=functions.read_file<|channel|>commentary json
        {"path": "a.py"}<|call|>
    """

    name = "gpt_oss"
    title = "OpenAI Harmony messages: a call is a message to functions.NAME (gpt-oss)"
    call_separator = ""  # one message per call, one after another
    plugin_key = "harmony"
    thinking = GPT_OSS_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`HarmonyPlugin`, and one for a reply that starts in the role header."""
        return [HarmonyPlugin(), HarmonyRoleHeaderPlugin()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the gpt-oss chat template renders one in the history.

        ``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>``, the
        arguments as JSON (the template's ``tojson``: ``", "`` and ``": "``, non-ASCII
        kept), ``<|call|>``.

        Raises:
            ValueError: the tool's name holds whitespace or ``<`` (the reader would end
                the recipient there).
        """
        if not tool_name or _NAME_FORBIDDEN.search(tool_name):
            raise ValueError(
                f"a gpt_oss tool name cannot be empty or hold whitespace or '<': {tool_name!r}"
            )
        arguments = json.dumps(to_jsonable_python(dict(args), by_alias=True), ensure_ascii=False)
        return (
            f"{START}assistant to={_FUNCTIONS}{tool_name}{CHANNEL}commentary json{MESSAGE}"
            f"{arguments}{CALL}"
        )

    def _instructions(self) -> str:
        return "gpt_oss_instructions"


register(GptOssDialect().record())
