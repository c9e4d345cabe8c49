r"""The harmony reader: gpt-oss's messages, channels and calls in one wire format.

It reads one wire format (harmony's message grammar: a header, a channel, a recipient,
a body) whose parts decide one another, so :class:`HarmonyReader` (on the kit's one
reader base, a state for the header and one for the body) is one state machine and this
module stays whole, under 600 lines; :class:`HarmonyPlugin` runs it.  See the package
for the format.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Final

from pydantic import BaseModel

from ...core.events import (
    ErrorType,
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    Span,
    TextOutputEvent,
)
from ...core.kit import (
    CallContext,
    FastData,
    JsonMark,
    JsonScanner,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ValueRun,
    call_too_large,
    call_unclosed,
    failure,
    refuse_chunk,
)
from ...schema.classify import CONTAINER_KINDS, STRUCTURED_KINDS, Kind, classify
from ...schema.coerce import coerce_value

START: Final = "<|start|>"
"""Opens a message's header (followed by the role, ``assistant``)."""
CHANNEL: Final = "<|channel|>"
"""Opens the channel name in a header."""
CONSTRAIN: Final = "<|constrain|>"
"""Names the body's format in a call's header (``<|constrain|>json``)."""
MESSAGE: Final = "<|message|>"
"""Ends a header; the body follows."""
END: Final = "<|end|>"
"""Ends a message."""
CALL: Final = "<|call|>"
"""Ends a tool call (a stop token: servers often leave it out)."""
RETURN: Final = "<|return|>"
"""Ends the final answer (a stop token)."""

ANALYSIS_HEADER: Final = f"{CHANNEL}analysis{MESSAGE}"
"""The header of a reasoning message, as the model writes it."""
ROLE_HEADER_RECIPIENT: Final = " to="
"""The recipient after the prompt's ``<|start|>assistant``, when a reply starts with it."""


_MARKS: Final = (CALL, RETURN, MESSAGE, CONSTRAIN)  # framing by themselves
_BODY_ENDS: Final = (END, RETURN)  # end a call's body besides <|call|>, and belong to it
_BATCH: Final = 4096  # the most body characters held for the scanner between "<"s
_MAX_HEADER: Final = 512  # the longest header followed, start tag included
_FUNCTIONS: Final = "functions."
_RECIPIENT: Final = re.compile(r"(?:^|(?<=[\s>]))to=([^\s<]+)")
_NAME_FORBIDDEN: Final = re.compile(r"[\s<]")
_JSON_WS: Final = " \t\r\n"
_STRUCTURE: Final = CONTAINER_KINDS | STRUCTURED_KINDS
_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars

# What the block being read is.
_MARK, _HEADER, _BODY, _FRAMED, _PROSE = range(5)


class HarmonyReader(Reader):
    """Reads one Harmony block: a header, a call's body, or a token that is framing alone.

    The block ends where the reader says (:attr:`~Reader.end`: after a header without
    recipient, where a call's body ends) or at ``<|call|>``.  The call's index is
    reserved when a header names a recipient.
    """

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = _MARK
        self.handlers = {_HEADER: self._header_piece, _BODY: self._body_piece}
        # A call's arguments inside a JSON string: the chunks the scanner takes whole,
        # streamed by the core (armed with the scanner by fast_path).
        self._run = ValueRun(arguments=True)
        self._start = 0  # the block's offset in the stream
        self._header = ""  # the header so far, start tag included
        self._body_at = 0  # the header's length (start tag included): the body starts there
        self._name = ""  # the recipient's tool name
        # Follows the call's JSON body (made when a header names a recipient).  The
        # scanner's state matters only at a "<" or an end tag: the body's pieces wait
        # in a short list until then, and are fed at once.
        self._scanner: JsonScanner | None = None
        self._pending: list[str] = []
        self._pending_size = 0
        self._marker = ""  # an end token being read after the body ("<|e...")
        self._marker_len = 0  # the end token that ended the body, in the block
        self._junk = False  # the body ended at a token that is not an end token

    def begin(self, tag: str, span: Span, out: list[ParseEvent]) -> None:
        """A header opens, or a token that is framing by itself (it ends at once)."""
        self._start = span[0]
        if tag in _MARKS:
            self.end = span[1]
        else:
            self.state = _HEADER
            self._header = tag

    def accepts_end(self) -> bool:
        """``<|call|>`` inside a JSON string of the body is content; elsewhere it ends."""
        return not (self.state == _BODY and (self._in_string() or self._marker))

    def _in_string(self) -> bool:
        """Whether the body read so far ends inside a JSON string."""
        return self._scanner is not None and self._catch_up("").in_string

    def _header_piece(
        self, data: str, i: int, base: int, out: list[ParseEvent]
    ) -> tuple[int, bool]:
        """Follow the header to ``<|message|>``; the body may follow in the same piece."""
        used = self._read_header(data[i:] if i else data, out)
        return i + used, self.end is not None

    def _body_piece(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Follow the call's JSON body (the whole piece is read)."""
        self._read_body(data, i, base, out)
        return len(data), self.end is not None

    # --- the header ----------------------------------------------------------------------

    def _read_header(self, data: str, out: list[ParseEvent]) -> int:
        """Add ``data`` to the header; how many of its characters the header took."""
        old = len(self._header)
        room = _MAX_HEADER - old
        header = self._header + (data if len(data) <= room else data[:room])
        self._header = header
        message = header.find(MESSAGE, max(0, old - len(MESSAGE) + 1))
        newline = header.find("\n", old)
        if message >= 0 and (newline < 0 or message < newline):
            end = message + len(MESSAGE)
            self._header = header[:end]
            self._header_done(out)
            return end - old
        if newline >= 0:  # headers are one line: this was text that held a token
            self.state = _PROSE
            self.end = self._start + newline
        elif len(header) >= _MAX_HEADER:
            self.state = _PROSE
            self.end = self._start + len(header)
        return len(data)

    def _recipient(self) -> re.Match[str] | None:
        return _RECIPIENT.search(self._header)

    def _header_done(self, out: list[ParseEvent]) -> None:
        """``<|message|>`` ended the header: framing, or a call whose body follows."""
        found = self._recipient()
        if found is None:
            self.state = _FRAMED
            self.end = self._start + len(self._header)
            return
        self.state = _BODY
        self._body_at = len(self._header)
        self._scanner = _opened_scanner()
        call = self._new_call(found)
        if self._name in call.tool_registry:
            self.announced = True
            span = (self._start + found.start(1), self._start + found.end(1))
            out.append(call.start(self._name, span))

    def _new_call(self, found: re.Match[str]) -> CallContext:
        """Reserve the call's index and remember the tool's name."""
        registry = self.call.tool_registry
        name = found.group(1).removeprefix(_FUNCTIONS)
        glued = name.removesuffix("json")
        if name not in registry and glued in registry:
            # "to=functions.shelljson": the format's "json" written without its space.
            name = glued
        self._name = name
        self.call.reserve()
        return self.call

    # --- the body ------------------------------------------------------------------------

    def _read_body(self, data: str, i: int, base: int, out: list[ParseEvent]) -> None:
        """Follow the JSON from ``data[i]`` (at ``base + i``) to where the body ends."""
        first = i
        n = len(data)
        json_end = first if self._marker else -1  # where this piece's JSON characters end
        fed = first  # the scanner has read data[:fed]
        while i < n:
            if self._marker:
                self._marker += data[i]
                i += 1
                if self._marker in _BODY_ENDS:
                    self._marker_len = len(self._marker)
                    self.end = base + i
                    break
                if not any(end.startswith(self._marker) for end in _BODY_ENDS):
                    self._junk = True  # "<|e..." that is no end token: kept in the call
                    self.end = base + i
                    break
                continue
            # Only a "<" can end the body: the scanner reads up to the next one and says
            # whether it stands inside a JSON string (content: read on) or not.
            less = data.find("<", i)
            if less < 0:
                i = n
                break
            scanner = self._catch_up(data[fed:less])
            fed = less
            if scanner.in_string:
                i = less + 1
                continue
            # Not JSON: the body ends.  The core holds back what could still be <|call|>,
            # so a piece ends right after this "<" or "<|" only when the stream ends there
            # or a "<" follows: no end token either way.  Whatever the chunking, the two
            # characters after it decide.
            i = json_end = less
            if data[i + 1 : i + 3] in ("|e", "|r"):
                self._marker = "<"
                i += 1
                continue
            self.end = base + i
            break
        if json_end < 0 and fed < n:  # the body goes on: the scanner reads the rest later
            self._pending.append(data[fed:] if fed else data)
            self._pending_size += n - fed
            if self._pending_size > _BATCH:
                self._catch_up("")
        self._delta(data[first : i if json_end < 0 else json_end], base + first, out)

    def fast_path(self) -> FastData | None:
        """In the body, only a ``<`` outside a JSON string can end it.

        Inside a string (the scanner caught up first), the scanner takes a chunk that
        does not close it, and ``<|call|>`` is content there (:meth:`accepts_end`).
        """
        self._run.armed = False
        if self.state != _BODY or self._marker or self.end is not None:
            return None
        scanner = self._catch_up("")
        if scanner.in_string:
            call = self.call
            if self.announced and call.emit_deltas:
                self._run.arm_json(scanner, self._name, call.call_index)
                return None, refuse_chunk, True  # the run takes what it can
            return None, self._plain_string, True
        return None, self._plain, False

    def value_run(self) -> ValueRun | None:
        """A call's arguments inside a JSON string, which the core streams."""
        return self._run

    def _plain_string(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_read_body` for a chunk inside a JSON string that does not close it."""
        scanner = self._scanner
        if scanner is None or not scanner.skip(data):
            return False
        self._delta(data, start, out)
        return True

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_read_body` for a chunk that cannot end the body.

        A chunk without a ``<`` waits for the scanner, as on the slow path; one with a
        ``<`` is body only when all of it lies inside a JSON string, which the scanner,
        caught up first, takes in one step.
        """
        if "<" in data:
            scanner = self._catch_up("")
            if not (scanner.in_string and scanner.skip(data)):
                return False
        else:
            self._pending.append(data)
            self._pending_size += len(data)
            if self._pending_size > _BATCH:
                self._catch_up("")
        self._delta(data, start, out)
        return True

    def _catch_up(self, piece: str) -> JsonScanner:
        """Feed the scanner what it has not read yet, then ``piece``; return it."""
        scanner = self._scanner
        assert scanner is not None  # made with the body
        if self._pending:
            self._pending.append(piece)
            piece = "".join(self._pending)
            self._pending = []
            self._pending_size = 0
        if piece:
            marks = scanner.feed(piece)
            if scanner.done:
                scanner = self._reopen(scanner, piece, marks)
        return scanner

    def _reopen(self, scanner: JsonScanner, piece: str, marks: list[JsonMark]) -> JsonScanner:
        """A stray ``]`` or ``}`` closed the scanner's own ``[`` as it read ``piece``.

        The rest of the piece is followed by a new scanner (as often as it happens),
        which is returned.
        """
        while True:
            # The last mark is the close's; the scanner's position counts the whole piece.
            piece = piece[marks[-1].end - (scanner.position - len(piece)) :]
            scanner = self._scanner = _opened_scanner()
            marks = scanner.feed(piece)
            if not scanner.done:
                return scanner

    def _delta(self, text: str, start: int, out: list[ParseEvent]) -> None:
        call = self.call
        if not text or not self.announced or not call.emit_deltas:
            return
        span = (start, start + len(text))
        out.append(call.arguments_delta(self._name, text, span))

    # --- the outcome ---------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Framing, the text of what was not a header, or the call's outcome."""
        kind = self.state
        if kind in (_MARK, _FRAMED):
            return [FramingEvent(text=block.raw, span=block.span)]
        if kind == _PROSE:
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if kind == _HEADER:  # <|call|> before <|message|>
            found = self._recipient()
            if found is None:
                return [FramingEvent(text=block.raw, span=block.span)]
            self._new_call(found)
            return self._malformed("the tool call has no <|message|> and no arguments", block)
        return self._call_outcome(block)

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """A call the stream ended runs only when its JSON is whole and it was not cut."""
        kind = self.state
        if kind == _BODY and not block.cut and not self._marker and self._complete(block):
            return self._call_outcome(block)
        if kind == _HEADER:
            found = self._recipient()
            if found is None:
                return [FramingEvent(text=block.raw, span=block.span)]
            self._new_call(found)
        elif kind != _BODY:
            return [FramingEvent(text=block.raw, span=block.span)]  # pragma: no cover
        return call_unclosed(block, self)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """A ``tool_too_large`` error for a call; the core delivers the rest as text."""
        if self.state == _BODY:
            return call_too_large(block, self, self.call.plugin)
        return [
            ParseErrorEvent(
                error_type=ErrorType.BLOCK_TOO_LARGE.value,
                message="a gpt_oss block is longer than max_tool_size; it is delivered as text",
                context=block.raw[:200],
                span=block.span,
            )
        ]

    def _body(self, block: PluginBlock) -> str:
        """The call's body: what follows its header, without the token that ended it."""
        content = block.content
        return content[self._body_at - len(block.start_tag) : len(content) - self._marker_len]

    def _complete(self, block: PluginBlock) -> bool:
        """Whether the body holds a whole JSON value (a call the stream ended may run)."""
        if self._in_string():
            return False
        body = self._body(block)
        try:
            _DECODER.raw_decode(body, len(body) - len(body.lstrip(_JSON_WS)))
        except (ValueError, RecursionError):
            return False
        return True

    def _call_outcome(self, block: PluginBlock) -> list[ParseEvent]:
        call = self.call
        model = call.tool_registry.get(self._name)
        if model is None:
            return call.unknown_tool(self._name, block)
        if self._junk:
            return self._malformed("the tool call's arguments end with an unknown token", block)
        body = self._body(block)
        start = len(body) - len(body.lstrip(_JSON_WS))
        try:
            data, end = _DECODER.raw_decode(body, start)
        except (ValueError, RecursionError) as exc:
            return self._malformed(f"the tool call's arguments are not valid JSON ({exc})", block)
        rest = body[end:].strip(_JSON_WS)
        if rest:
            return self._malformed(
                f"the tool call's arguments have text after their JSON object: {rest[:20]!r}",
                block,
            )
        if isinstance(data, str):
            # The chat template renders arguments given as a string with ``tojson``: a
            # JSON string that holds the object.  Models that saw it may write it too.
            with contextlib.suppress(ValueError, RecursionError):
                data = json.loads(data, strict=False)
        if not isinstance(data, dict):
            return self._malformed("the tool call's arguments must be a JSON object", block)
        _structure_strings(model, data)
        result = call.validate(self._name, model, data)
        return call.call(self._name, result, block)

    def _malformed(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        """A call whose arguments cannot be read: ``malformed_tool``, never executed."""
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"{why}; the call is not executed",
            block,
            call_index=self.error_index,
        )


class HarmonyPlugin(ReaderPlugin):
    """Reads the headers, calls and end tokens of Harmony messages (see the module).

    ``ParserConfig(dialect="gpt_oss")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import ParserConfig, StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser(
        ...     {"read_file": ReadFile}, config=ParserConfig(dialect="gpt_oss")
        ... )
        >>> reply = (
        ...     "<|channel|>commentary to=functions.read_file <|constrain|>json"
        ...     '<|message|>{"path": "a.py"}<|call|>'
        ... )
        >>> [e.kind for e in parser.feed(reply) + parser.close()]
        ['tool_call_start', 'tool_arguments_delta', 'tool_call']
    """

    name = "gpt_oss"
    start_tags: tuple[str, ...] = (START, f"{END}{START}", CHANNEL, *_MARKS)
    end_tag = CALL
    # Headers and end tokens are framing: they keep the start of the reply for plugins
    # that read only there.
    is_framing = True
    reader = HarmonyReader
    reserve_index = False  # reserved when a header names a recipient


class HarmonyRoleHeaderPlugin(HarmonyPlugin):
    """Reads a reply that starts inside the role header: `` to=functions.NAME<|channel|>…``.

    The chat template ends the prompt with ``<|start|>assistant``, so a reply that calls
    a tool at once may go on with the recipient.  `` to=`` opens a header only at the
    start of the reply (``reply_start_only``): the core looks for it there and nowhere
    else, so a space is never a stop character in the rest of the reply.
    """

    name = "gpt_oss_role_header"
    start_tags = (ROLE_HEADER_RECIPIENT,)
    reply_start_only = True


def _opened_scanner() -> JsonScanner:
    """A scanner already inside a ``[`` of its own: whatever it reads is nested.

    Nested text is followed by strings and brackets only, so quotes open strings in the
    whole body (JSON value or not) and no character stops the scanner.

    Example:
        >>> scanner = _opened_scanner()
        >>> _ = scanner.feed('x "<|call|>')
        >>> scanner.in_string
        True
    """
    scanner = JsonScanner(keep_text=False)
    scanner.feed("[")
    return scanner


def _takes_structure(annotation: Any) -> bool:
    """Whether a field takes only lists, dicts or models (and maybe None), never a string."""
    info = classify(annotation)
    if info.kind is Kind.UNION:
        members = [classify(arg) for arg in info.args]
        kinds = [member.kind for member in members if member.kind is not Kind.NONE]
        return bool(kinds) and all(kind in _STRUCTURE for kind in kinds)
    return info.kind in _STRUCTURE


def _structure_strings(model: type[BaseModel], arguments: dict[str, Any]) -> None:
    """Read a string given for a list, dict or model field as that value, in place.

    Models write a list as a JSON string too (``"tags": "[1, 2]"``); such a field can
    never take the string itself, so reading it
    (:func:`~stream_parser.schema.coerce.coerce_value`: JSON or XML items) loses
    nothing.  Anything else is validated as written.
    """
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        fields[name] = info.annotation
        if info.alias:
            fields[info.alias] = info.annotation
    for key, value in arguments.items():
        annotation = fields.get(key)
        if isinstance(value, str) and annotation is not None and _takes_structure(annotation):
            arguments[key] = coerce_value(value, annotation)
