# ruff: noqa: RUF002  (the format's markers are fullwidth characters)
r"""The deepseek dialect: the tool-call formats of the DeepSeek models, read and written.

DeepSeek's models write their tool calls in one *section* per reply, in one of two
markups.  The markers are special tokens spelled with U+FF5C ``｜`` (fullwidth vertical
bar) and U+2581 ``▁`` (lower one-eighth block); a model writes each as one token.

**V3 / R1** (each call's type, its name on a line, the arguments in a JSON fence)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file
    ```json
    {"path": "a.py"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

**V3.1** (the name, then the JSON arguments; the writer's default; one line, cut here)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>
    {"path": "a.py"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

**V3.2 / V4 "DSML"** (XML-like tags, one per parameter; ``string="false"`` values are
JSON).  The section is ``function_calls`` (V3.2), ``tool_calls`` (V4) or `` calls``
(with a leading space, as later checkpoints write it; their ``invoke`` and
``parameter`` tags carry that space too, which the reader accepts on every tag)::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="search">
    <｜DSML｜parameter name="query" string="true">tokyo</｜DSML｜parameter>
    <｜DSML｜parameter name="max_results" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

Parallel calls repeat the call (V3 writes a newline between them) inside one section.
Reasoning is ``<think>…</think>``; the chat templates of the thinking models write
``<think>`` into the prompt, so such a reply starts inside reasoning and shows only
``</think>`` (``dialect_for_model`` or ``start_in_thinking=True`` say so: see
:data:`DEEPSEEK_THINKING`).

Theory of operation
-------------------

Each section is one plugin block: :class:`DeepSeekToolCallsPlugin` reads the V3 and
V3.1 section (its calls are told apart by what comes before ``<｜tool▁sep｜>``:
``function`` followed by a name line is V3, anything else is V3.1's name), and
:class:`DsmlPlugin` reads a DSML section (one plugin per section name, since each has
its own end tag; the chat template's blank line before the section belongs to it).
A section that opens anywhere else than before ``<`` (rule 3), or an ``invoke`` written
without its section, is text: it is not a call.

The section's reader (:class:`ToolCallsReader`, :class:`DsmlReader`) is a state table
on the kit's one reader base, fed the content piece by piece, and each plugin is the
kit's reader plugin.  The base keeps a *hold*, the characters it cannot
decide yet (a marker cut by the end of a piece, a tag waiting for its ``>``, a closing
tag waiting for what follows it), bounded by the longest tag plus
``buffer_keep_size`` characters of whitespace, so every character is looked at a
bounded number of times (linear time) and nothing depends on how the text was cut.

* A call is announced (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a
  registered tool) as soon as its name is complete, and reserves its ``call_index``
  when it opens.
* JSON arguments are followed by :class:`~stream_parser.core.kit.JsonScanner` and
  stream verbatim as :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s; a
  ``<｜tool▁call▁end｜>`` inside a JSON string is content.  DSML values stream as
  :class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s; as in rule 5 of the XML
  format, ``</｜DSML｜parameter>`` closes a value only when the next thing after it
  (whitespace aside) is a DSML tag, so a value that mentions the markup is read whole.
* When the section closes, each call becomes one outcome, whose span is the call's
  text (the section's markers and the whitespace between calls belong to the calls
  next to them, so the spans tile the input): a
  :class:`~stream_parser.core.events.ToolCallEvent`, or an error and the call's raw
  text.  ``unknown_tool`` for a name that is not registered; ``malformed_tool`` for a
  call that cannot be read (no name, arguments that are not a JSON object, text where
  markup belongs); ``invalid_params`` when the arguments fail the tool's model.
* A call whose end marker is missing but whose arguments are complete is read as the
  model meant when the section's end follows (and, in DSML, the next ``invoke``:
  DeepSeek V4 leaves out ``</｜DSML｜invoke>`` at times).
* A section the stream ends: the calls whose end marker arrived run; the open call
  gets ``unclosed_tool`` and its raw text (rule 9), unless its arguments are complete
  and the stream ended normally (``PluginBlock.cut`` is False: not ``finish_reason
  == "length"``, no stream error), the way a model ends its reply after its last
  call.  A section over ``max_tool_size`` (all its calls together) is
  ``tool_too_large`` and delivered as text; nothing in it runs.

Values: JSON arguments are validated by the tool's model (Pydantic's lax mode).  DSML
values go through the XML conversion
(:meth:`~stream_parser.core.xml_tools.XMLToolParser.build_instance`): ``string="true"``
values are the text itself, as written, for a ``str`` (or ``str | None``) field and a
raw parameter (the tags are the only framing), and trimmed and converted for a field of
another type; ``string="false"`` values are JSON: ``null`` is None, a JSON string is its
text as written, anything else is converted by the field's type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from pydantic_core import to_jsonable_python

from ...core.kit import ParsePlugin, ThinkingFormat, register
from ...errors import ConfigError
from .._base import Dialect
from .dsml import DsmlPlugin, DsmlReader, _format_dsml
from .section import CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, DSML, DSML_SECTIONS, SEP
from .v3 import DeepSeekToolCallsPlugin, ToolCallsReader

__all__ = [
    "CALLS_BEGIN",
    "CALLS_END",
    "CALL_BEGIN",
    "CALL_END",
    "DEEPSEEK_THINKING",
    "DSML",
    "DSML_SECTIONS",
    "DeepSeekDialect",
    "DeepSeekToolCallsPlugin",
    "DsmlPlugin",
    "DsmlReader",
    "ToolCallsReader",
]


DEEPSEEK_THINKING: Final = ThinkingFormat((("<think>", "</think>"),), bare_close=True)
"""DeepSeek's reasoning: ``<think>…</think>``, the opening tag usually in the prompt.

The thinking models' chat templates end the prompt with ``<think>`` (R1, V3.2, V4, and
V3.1 in thinking mode), so the reply starts inside reasoning and shows only
``</think>``: ``dialect_for_model`` marks those models ``prefilled_reasoning``, and
``ParserConfig(start_in_thinking=True)`` says so for any.  Then a reply that writes
``<think>`` itself reads the same (``bare_close``).  Otherwise a reply starts as the
reply, and a bare ``</think>`` is framing with a notice.
"""


Variant = Literal["v3", "v3.1", "dsml"]


class DeepSeekDialect(Dialect):
    r"""DeepSeek's tool calls: V3 / R1, V3.1 and V3.2 / V4 (DSML), read alike.

    Args:
        variant: the form :meth:`format_call` writes: ``"v3.1"`` (the default: the
            shortest, and what V3.1 and later models read in their history), ``"v3"``
            (the typed call with a JSON fence) or ``"dsml"`` (V3.2's
            ``function_calls`` section).

    Example:
        >>> text = DeepSeekDialect().format_call("read_file", {"path": "a.py"})
        >>> print(text.replace("><", ">\n<"))  # one line, shown a marker a line
        <｜tool▁calls▁begin｜>
        <｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "a.py"}<｜tool▁call▁end｜>
        <｜tool▁calls▁end｜>
    """

    name = "deepseek"
    title = "DeepSeek's special-token tool calls (V3, V3.1) and DSML (V3.2, V4)"
    plugin_key = "deepseek"
    thinking = DEEPSEEK_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked
    markers = (CALL_BEGIN, SEP, CALL_END, DSML)

    def __init__(self, variant: Variant = "v3.1") -> None:
        if variant not in ("v3", "v3.1", "dsml"):
            raise ConfigError(f"unknown deepseek variant {variant!r} (v3, v3.1 or dsml)")
        self.variant = variant

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:
        """The V3 / V3.1 section plugin and one DSML plugin per section name."""
        return [DeepSeekToolCallsPlugin(), *(DsmlPlugin(s) for s in DSML_SECTIONS)]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call as the DeepSeek chat templates render it, in :attr:`variant`.

        Raises:
            ValueError: (dsml) a string value holds ``</｜DSML｜parameter>`` followed by
                DSML markup, which the reader would take for the value's end.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write a turn's calls in one tool-calls section, as the templates render them.

        V3 puts a newline between two calls, V3.1 nothing; DSML writes one ``invoke``
        per call in one block.

        Raises:
            ValueError: (dsml) a string value holds ``</｜DSML｜parameter>`` followed by
                DSML markup.
        """
        if not calls:  # no calls write nothing, not an empty section
            return ""
        if self.variant == "dsml":
            return _format_dsml(calls)
        separator = "\n" if self.variant == "v3" else ""
        inner = separator.join(
            f"{CALL_BEGIN}{self._call(tool_name, args)}{CALL_END}" for tool_name, args in calls
        )
        return f"{CALLS_BEGIN}{inner}{CALLS_END}"

    def _call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """One call's name and arguments, between its markers (V3 or V3.1)."""
        arguments = json.dumps(to_jsonable_python(dict(args), by_alias=True), ensure_ascii=False)
        if self.variant == "v3":
            return f"function{SEP}{tool_name}\n```json\n{arguments}\n```"
        return f"{tool_name}{SEP}{arguments}"

    def _instructions(self) -> str:
        return "deepseek_instructions"


register(DeepSeekDialect().record())
