r"""The gemma4 dialect: Gemma 4's own call syntax between ``<|tool_call>`` tokens.

Written by Gemma 4 (its chat template renders history calls the same way)::

    <|tool_call>call:write_file{content:<|"|>print("hi")<|"|>,mode:420}<tool_call|>

After ``call:`` and the tool's name comes one object in Gemma's value syntax: keys are
bare (``path:``), strings sit between two ``<|"|>`` tokens and hold anything else raw
(quotes, braces, newlines, even ``<tool_call|>``), numbers, ``true``, ``false`` and
``null`` are bare, objects ``{k:v,...}`` and arrays ``[a,b]`` nest in the same syntax.
Several calls follow each other without separators.  Reasoning is written as
``<|channel>thought\n...\n<channel|>``: the dialect registers ``<|channel>`` and
``<channel|>`` as its thinking tags (:data:`GEMMA4_THINKING`, used unless
``ParserConfig.thinking_tags`` is set) and ``thought\n`` and the ``\n`` before the
closing token as framing (:data:`GEMMA4_FRAMING`), so the thinking content is what the
model meant.

Theory of operation
-------------------

:class:`Gemma4Plugin` claims ``<|tool_call>`` (a special token, so it opens a block
wherever it appears) and ``<tool_call|>``; each block is one call, read by a
:class:`Gemma4Reader`:

* **Strings.**  Outside strings the syntax has no ``<|"|>`` of its own, so the reader is
  inside a string exactly when it has seen an odd number of ``<|"|>`` tokens.  It counts
  them as the pieces arrive, keeping the last four characters of the previous piece so
  that a token cut between two pieces is counted once (the token cannot overlap
  itself).  :meth:`Gemma4Reader.accepts_end` answers from that count: a
  ``<tool_call|>`` inside a string is content.
* **Name.**  The characters up to the first ``{`` are the head, ``call:NAME``.  When the
  ``{`` arrives the call is announced
  (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a registered tool); a
  head longer than 256 characters is not followed.
* **Arguments.**  From that ``{`` on, the content is streamed verbatim as
  :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.

Every character is looked at a bounded number of times while streaming, and once more
when the block closes: then the whole content is parsed once (a recursive descent that
never backtracks, nested at most 64 deep) into Python values, converted by the tool's
field types and validated by its model.  The outcome is a
:class:`~stream_parser.core.events.ToolCallEvent`, or an error and the block's raw text:

* ``malformed_tool``: the content is not ``call:NAME{...}`` in this syntax: a string
  without its closing ``<|"|>``, a bare value that is not a number, ``true``, ``false``
  or ``null``, a key given twice, text after the object, the round form
  ``call:NAME(...)`` some models write, an opener without ``call``;
* ``unknown_tool``: the name is not registered;
* ``invalid_params``: the arguments fail validation.

Values are converted by the tool's fields at the top level: a bare scalar given for a
``str`` field is its text (``zip:02139`` reads ``"02139"``, not ``2139``), and a string
given for a field of another type is converted by that type
(:func:`~stream_parser.schema.coerce.coerce_value`: ``<|"|>[1, 2]<|"|>`` for a list).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic_core import to_jsonable_python

from ..core.events import ErrorType, ParseEvent, Span
from ..core.kit import (
    CallContext,
    FastData,
    Framing,
    ParsePlugin,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ThinkingFormat,
    ValueRun,
    failure,
    register,
)
from ._base import Dialect
from .gemma4_syntax import (
    _KEEP,
    _MAX_HEAD,
    _NAME,
    _RUN_STOP,
    _WS,
    CALL_END,
    CALL_START,
    CHANNEL_END,
    CHANNEL_START,
    STRING_DELIMITER,
    TOOL_RESPONSE,
    convert,
    parse_call,
    write_value,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CALL_END",
    "CALL_START",
    "CHANNEL_END",
    "CHANNEL_START",
    "GEMMA4_FRAMING",
    "GEMMA4_THINKING",
    "STRING_DELIMITER",
    "Gemma4Dialect",
    "Gemma4Plugin",
    "Gemma4Reader",
    "parse_call",
]


#: The framing of the Gemma 4 chat template around reasoning:
#: ``<|channel>thought\n…\n<channel|>``.
GEMMA4_FRAMING: Final = Framing(thinking_open="thought\n", thinking_close="\n")


#: The reasoning format of Gemma 4: ``<|channel>`` ... ``<channel|>`` (its framing above).
GEMMA4_THINKING: Final = ThinkingFormat(((CHANNEL_START, CHANNEL_END),))


class Gemma4Reader(Reader):
    """Reads one ``<|tool_call>`` block: ``call:NAME{...}``."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._tail = ""  # the last characters fed, for a <|"|> cut between pieces
        self._in_string = False
        self._head: list[str] = []  # "call:NAME" before the "{"
        self._head_size = 0
        self._head_start = -1
        self._phase = 0  # 0 head, 1 arguments, 2 not followed
        self._name = ""
        self._deltas = call.emit_deltas
        # Fixed while the fast path runs (see fast_path): whether its chunks stream as
        # deltas (the call's index is the run's).
        self._stream = False
        # The arguments, which the core streams itself while a chunk without "<" cannot
        # hold a <|"|> token: armed when they stream and the tail holds no "<".
        self._run = ValueRun(_RUN_STOP, arguments=True)

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Count string tokens; announce the call at its ``{``; stream the arguments."""
        text = self._tail + data
        if text.count(STRING_DELIMITER) % 2:
            self._in_string = not self._in_string
        self._tail = text[-_KEEP:]
        if self._phase == 1:
            self._delta(data, start, out)
            return
        if self._phase != 0:
            return
        if self._head_start < 0:
            self._head_start = start
        brace = data.find("{")
        head = data if brace < 0 else data[:brace]
        self._head.append(head)
        self._head_size += len(head)
        if self._head_size > _MAX_HEAD:
            self._phase = 2
            return
        if brace < 0:
            return
        self._phase = 1
        self._announce((self._head_start, start + brace), out)
        self._run.open(self._name, "", self.call.call_index, start + brace)
        self._delta(data[brace:], start + brace, out)

    def fast_path(self) -> FastData | None:
        """In the arguments, every chunk is a delta; only string tokens are counted.

        Inside a string, ``<tool_call|>`` is content (:meth:`accepts_end`) as long as
        the string goes on: a chunk that ends it is left to the slow path.
        """
        if self._phase != 1:
            return None
        self._stream = self.announced and self._deltas
        self._arm()
        if self._in_string:
            return None, self._plain_in_string, True
        return None, self._plain, False

    def _plain_in_string(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_plain` inside a string, for a chunk that does not end it."""
        tail = self._tail
        # A delimiter cut between the pieces begins in the tail, with its "<".
        if STRING_DELIMITER in data or ("<" in tail and STRING_DELIMITER in tail + data):
            return False
        self._tail = data[-_KEEP:] if len(data) >= _KEEP else (tail + data)[-_KEEP:]
        if self._stream:
            span = (start, start + len(data))
            out.append(self.call.arguments_delta(self._name, data, span))
        self._arm()
        return True

    def value_run(self) -> ValueRun | None:
        """The arguments: the core streams their chunks without ``<`` while it is armed."""
        return self._run

    def _arm(self) -> None:
        """Arm the run: a chunk without ``<`` holds no token and streams as it is.

        Unless the tail holds the start of a ``<|"|>`` cut between the pieces.  The run
        leaves the tail as it is: without a ``<`` it cannot begin a token, as if empty.
        """
        self._run.armed = self._stream and "<" not in self._tail

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` in the arguments."""
        text = self._tail + data
        if text.count(STRING_DELIMITER) % 2:
            self._in_string = not self._in_string
        self._tail = text[-_KEEP:]
        if self._stream:
            span = (start, start + len(data))
            out.append(self.call.arguments_delta(self._name, data, span))
        self._arm()
        return True

    def _announce(self, span: Span, out: list[ParseEvent]) -> None:
        head = "".join(self._head).strip(_WS)
        self._head = []
        if not head.startswith("call:"):
            return
        name = head[len("call:") :].strip(_WS)
        if name not in self.call.tool_registry or not _NAME.fullmatch(name):
            return
        self._name = name
        self.announced = True
        out.append(self.call.start(name, span))

    def _delta(self, piece: str, start: int, out: list[ParseEvent]) -> None:
        if piece and self.announced and self.call.emit_deltas:
            out.append(self.call.arguments_delta(self._name, piece, (start, start + len(piece))))

    def accepts_end(self) -> bool:
        """A ``<tool_call|>`` inside a string is content; anywhere else it ends the call."""
        return not self._in_string

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Parse the content once and validate the arguments with the tool's model."""
        try:
            name, arguments, scalars = parse_call(block.content)
        except ValueError as exc:
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"{exc}; expected {_EXPECTED}; the call is not executed",
                block,
                call_index=self.error_index,
            )
        model = self.call.tool_registry.get(name)
        if model is None:
            return self.call.unknown_tool(name, block)
        convert(model, arguments, scalars)
        result = self.call.validate(name, model, arguments)
        return self.call.call(name, result, block)


_EXPECTED: Final = f"call:NAME{{key:{STRING_DELIMITER}text{STRING_DELIMITER},n:1}}"


class Gemma4Plugin(ReaderPlugin):
    """Reads Gemma 4's ``<|tool_call>call:NAME{...}<tool_call|>`` blocks.

    ``ParserConfig(dialect="gemma4")`` registers one for you.  ``<|tool_response>``
    right after a call (the chat template's marker, the model's stop token, when a
    server leaves it in the text) belongs to the call's span.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[Gemma4Plugin()])
        >>> text = '<|tool_call>call:read_file{path:<|"|>a.py<|"|>}<tool_call|>'
        >>> [e.kind for e in parser.feed(text) + parser.close()]
        ['tool_call_start', 'tool_arguments_delta', 'tool_call']
    """

    name = "gemma4"
    start_tags: tuple[str, ...] = (CALL_START,)
    # vLLM's Gemma 4 parser reads <|tool_call> in a thought as its implicit end.
    ends_reasoning = "^"
    end_tag = CALL_END
    trailing: tuple[str, ...] = (TOOL_RESPONSE,)

    reader = Gemma4Reader


# --- writing ---------------------------------------------------------------------------------


class Gemma4Dialect(Dialect):
    """``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>`` (Gemma 4).

    Example:
        >>> print(Gemma4Dialect().format_call("read_file", {"path": "a.py", "limit": 10}))
        <|tool_call>call:read_file{limit:10,path:<|"|>a.py<|"|>}<tool_call|>
    """

    name = "gemma4"
    title = "call:NAME{key:value} between <|tool_call> and <tool_call|> tokens (Gemma 4)"
    call_separator = ""  # the template writes a turn's calls one after another
    plugin_key = "gemma4"
    framing = GEMMA4_FRAMING
    thinking = GEMMA4_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked
    markers = (STRING_DELIMITER,)

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`Gemma4Plugin`."""
        return [Gemma4Plugin()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the Gemma 4 chat template renders it.

        Members sorted by key (case ignored), keys bare at every depth, strings between
        ``<|"|>`` tokens, no whitespace.  Values that are not JSON types (models, enums,
        paths, dates) are written as their JSON form; None as ``null``.

        Raises:
            ValueError: the tool's name is not a plain name, or a string holds
                ``<|"|>`` (which would end it), or a number is not finite.
        """
        if not _NAME.fullmatch(tool_name):
            raise ValueError(f"the tool name {tool_name!r} cannot be written in the gemma4 format")
        jsonable = to_jsonable_python(dict(args), by_alias=True)
        return f"{CALL_START}call:{tool_name}{write_value(jsonable)}{CALL_END}"

    def _instructions(self) -> str:
        return "gemma4_instructions"


register(Gemma4Dialect().record())
