"""Chat-completion chunks as stream items: the ``openai`` SDK's objects and their JSON.

``client.chat.completions.create(..., stream=True)`` returns a ``Stream`` (or, with
``AsyncOpenAI``, an ``AsyncStream``) of ``ChatCompletionChunk`` objects.  The parser's
drivers take such a stream as it is: each chunk becomes the
:class:`~stream_parser.core.chunks.ChatDelta` it stands for and goes the way every
``ChatDelta`` goes, so the events are exactly those of the equivalent ``ChatDelta``
items.  A dict shaped like a chunk's JSON (``{"choices": [{"delta": {...}}]}``, as a
raw SSE ``data:`` line decodes) is read the same way.

Theory of operation
-------------------

Everything is read by duck typing: attribute access on objects (and ``model_extra``,
where Pydantic models keep the fields their class does not declare), key access on
mappings.  Nothing here imports the SDK, so the core stays free of it, and any object
shaped like a chunk works.  An item is a chunk when it is a mapping with a ``"choices"``
or ``"usage"`` key, or an object with a ``choices`` attribute.

From a chunk, :meth:`ChunkReader.delta` takes:

* of one choice (by default the one with index 0, or without an index; a
  ``ChunkReader(choice=i)`` reads choice ``i`` of an ``n > 1`` stream):
  ``delta.content`` (with ``delta.refusal`` text appended) -> ``content``;
  ``delta.reasoning_content`` or, as some servers name it, ``delta.reasoning`` ->
  ``reasoning``; ``delta.tool_calls[i]`` (``index``, ``id``, ``function.name``,
  ``function.arguments``) -> ``tool_calls``; ``finish_reason`` -> ``finish_reason``;
* a choice without ``delta`` but with a ``message`` (a whole ``ChatCompletion``, as
  ``stream=False`` returns it) is read from the message: the reply in one item;
* ``usage``, wherever it comes (often in a last chunk whose ``choices`` is empty), as a
  plain dict: a model's ``model_dump(mode="json", exclude_none=True)``, or a copy of a
  mapping; an object of another kind is passed on as it is.

A server may send anything anywhere (the SDK builds chunks without validating them), so
a field of the wrong type counts as absent: a chunk that carries nothing (the opening
``role`` chunk, a ``None`` content) gives an empty ``ChatDelta``, hence no event.

The SDK's stream helper (``client.chat.completions.stream(...)``) yields events instead
of chunks: a ``"chunk"`` event carries each chunk (``event.chunk``), and every other
event (``"content.delta"``, ``"tool_calls.function.arguments.done"``...) is worked out
from those chunks.  :func:`helper_event_type` recognises them: the chunk of a ``"chunk"``
event is read as any chunk, and the others give nothing, so the events are those of the
plain stream.
Tool-call fragments without a usable ``index`` (some servers omit it) go to the call
with the same ``id``, to a new call if the ``id`` is new, or else to the call of the
previous fragment: the only state a :class:`ChunkReader` keeps, so each parser has its
own.

The text of a chunk is JSON-decoded, and JSON escapes text as UTF-16, so a server that
cuts between the two halves of a surrogate pair leaves a lone surrogate at the end of one
chunk and another at the start of the next.  :class:`ChunkDeltas`, which the parser and
:class:`~stream_parser.llm.OpenAIChatModel` both read chunks through, holds such a half
back until its pair comes, and makes every other lone surrogate U+FFFD, so the events'
text is always valid Unicode.  Transport errors as ``ChatDelta(error=...)`` are the
client's (:class:`~stream_parser.llm.OpenAIChatModel`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .chunks import ChatDelta, ToolCallDelta

__all__ = [
    "ACCEPTED_ITEMS",
    "ChunkDeltas",
    "ChunkReader",
    "fix_surrogates",
    "helper_event_type",
    "is_chunk",
    "read_field",
]

ACCEPTED_ITEMS = (
    "str; bytes (UTF-8, in parse_stream / aparse_stream); (content, metadata) tuples; "
    "ChatDelta; chat completion chunks (the openai SDK's ChatCompletionChunk, as its "
    "Stream / AsyncStream yields them, a whole ChatCompletion, or any object with a "
    "`choices` attribute), and the events of its stream helper "
    "(client.chat.completions.stream()); or "
    "dicts shaped like a chunk's JSON ({'choices': [{'delta': {...}}]})"
)
"""Every kind of stream item the parser accepts, for error messages."""


def is_chunk(item: object) -> bool:
    """Whether ``item`` is read as a chat completion chunk.

    Example:
        >>> is_chunk({"choices": []}), is_chunk({"content": "hi"})
        (True, False)
    """
    if type(item) is dict or isinstance(item, Mapping):
        return "choices" in item or "usage" in item
    return hasattr(item, "choices")


_HELPER_KINDS = ("content.", "refusal.", "tool_calls.", "logprobs.")
"""How the ``type`` of every event of the SDK's stream helper but ``"chunk"`` begins."""


def helper_event_type(item: object) -> str | None:
    """The ``type`` of an event of the ``openai`` SDK's stream helper, else None.

    ``"chunk"`` for the event that carries a chunk (in ``chunk``); the other events'
    types (``"content.delta"``...) for the events worked out from the chunks.

    Example:
        >>> helper_event_type({"type": "chunk", "chunk": {"choices": []}})
        'chunk'
        >>> helper_event_type({"type": "content.delta"}), helper_event_type({"type": "x"})
        ('content.delta', None)
    """
    if isinstance(item, (str, bytes)):
        return None
    kind = read_field(item, "type")
    if not isinstance(kind, str):
        return None
    if kind == "chunk":
        return kind if read_field(item, "chunk") is not None else None
    return kind if kind.startswith(_HELPER_KINDS) else None


def read_field(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, else ``obj.name`` or ``obj.model_extra[name]``.

    The common cases are tried first, without an ABC check or a failing attribute
    lookup (each costs more than the rest of the reading): a dict, then an instance
    attribute (a Pydantic model keeps its declared fields in ``__dict__``), then
    ``model_extra``, where a Pydantic model keeps the fields its class does not
    declare (such as ``reasoning_content`` on the SDK's ``ChoiceDelta``).
    """
    if obj is None:
        return None
    if type(obj) is dict:
        return obj.get(name)
    values = getattr(obj, "__dict__", None)
    if values is not None and name in values:
        return values[name]
    extra = getattr(obj, "model_extra", None)
    if type(extra) is dict:
        # A Pydantic model that keeps extras: a name that is neither a field nor an
        # extra is absent.
        return extra.get(name)
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _text(value: Any) -> str | None:
    """A non-empty string, or None."""
    return value if isinstance(value, str) and value else None


def _usage(value: Any) -> Any:
    """A usage report as a plain dict when it can be one; None when there is none."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            data = dump(mode="json", exclude_none=True)
        except Exception:  # an object whose model_dump is not Pydantic's: keep it as is
            return value
        if isinstance(data, dict):
            return data
    return value


def _is_list(value: Any) -> bool:
    """A list, a tuple or another sequence that is not text."""
    kind = type(value)
    if kind is list or kind is tuple:
        return True
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def _choice_of(choices: Any, wanted: int) -> Any:
    """The choice with index ``wanted`` (for 0, also one without an index); None if none."""
    if not _is_list(choices):
        return None
    for choice in choices:
        index = read_field(choice, "index")
        if index == wanted or (index is None and wanted == 0):
            return choice
    return None


class ChunkReader:
    """Turns the chat completion chunks of one stream into :class:`ChatDelta` items.

    Args:
        choice: the index of the choice to read (``n > 1`` streams several choices in
            the same chunks; one reader per choice reads them apart).  Choice 0 is also
            a choice without an index.

    Example:
        >>> reader = ChunkReader()
        >>> chunk = {"choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]}
        >>> reader.delta(chunk).reasoning
        'hm'
        >>> reader.delta({"choices": [], "usage": {"total_tokens": 7}}).usage
        {'total_tokens': 7}
        >>> second = {"choices": [{"index": 1, "delta": {"content": "b"}}]}
        >>> ChunkReader(choice=1).delta(second).content
        'b'
    """

    __slots__ = ("_choice", "_index_by_id", "_last_index", "_next_index")

    def __init__(self, choice: int = 0) -> None:
        self._choice = choice
        self._index_by_id: dict[str, int] = {}
        self._last_index: int | None = None
        self._next_index = 0

    def delta(self, chunk: Any) -> ChatDelta:
        """The :class:`ChatDelta` that ``chunk`` stands for (empty if it carries nothing)."""
        usage = _usage(read_field(chunk, "usage"))
        choice = _choice_of(read_field(chunk, "choices"), self._choice)
        if choice is None:
            return ChatDelta(usage=usage)
        delta = read_field(choice, "delta")
        if delta is None:
            # A whole completion (``stream=False``) carries its reply as ``message``.
            delta = read_field(choice, "message")
        content = _text(read_field(delta, "content"))
        refusal = _text(read_field(delta, "refusal"))
        if refusal is not None:
            content = (content or "") + refusal
        reasoning = _text(read_field(delta, "reasoning_content")) or _text(
            read_field(delta, "reasoning")
        )
        return ChatDelta(
            content=content,
            reasoning=reasoning,
            tool_calls=self._fragments(read_field(delta, "tool_calls")),
            usage=usage,
            finish_reason=_text(read_field(choice, "finish_reason")),
        )

    def _fragments(self, raw: Any) -> tuple[ToolCallDelta, ...]:
        if not raw or not _is_list(raw):
            return ()
        fragments = []
        for item in raw:
            call_id = _text(read_field(item, "id"))
            function = read_field(item, "function")
            name = _text(read_field(function, "name"))
            arguments = _text(read_field(function, "arguments"))
            if call_id is None and name is None and arguments is None:
                continue
            index = self._index(read_field(item, "index"), call_id)
            fragments.append(ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments))
        return tuple(fragments)

    def _index(self, raw_index: Any, call_id: str | None) -> int:
        """The call a fragment belongs to: its own index, or one inferred from its id."""
        index: int
        if isinstance(raw_index, int) and not isinstance(raw_index, bool) and raw_index >= 0:
            index = raw_index
        elif call_id is not None and call_id in self._index_by_id:
            index = self._index_by_id[call_id]
        elif call_id is not None or self._last_index is None:
            index = self._next_index
        else:
            index = self._last_index
        if call_id is not None:
            self._index_by_id.setdefault(call_id, index)
        self._last_index = index
        self._next_index = max(self._next_index, index + 1)
        return index


class ChunkDeltas:
    r"""Turns the chunks of one reply into :class:`ChatDelta` items, in valid Unicode.

    :class:`ChunkReader` reads each chunk, for the choice given (0 by default), and places
    the tool-call fragments of servers that omit their index.  JSON escapes text as
    UTF-16, so a server that cuts its text between the two halves of a surrogate pair
    (``"\ud83d"``, then ``"\ude00"``) sends each half in its own chunk, and the JSON
    decoder leaves each one a lone surrogate.
    Per text channel (content, reasoning, each call's arguments) a trailing high
    surrogate is therefore held back until the next piece of that channel brings its
    pair; the finish reason (or :meth:`flush`, at the end) turns what is still held into
    U+FFFD, as is every other lone surrogate.

    Example:
        >>> deltas = ChunkDeltas()
        >>> def chunk(text):
        ...     return {"choices": [{"index": 0, "delta": {"content": text}}]}
        >>> deltas.delta(chunk("smile \ud83d")).content
        'smile '
        >>> deltas.delta(chunk("\ude00!")).content == "\U0001f600!"
        True
    """

    def __init__(self, choice: int = 0) -> None:
        self._reader = ChunkReader(choice)
        self._held: dict[str | int, str] = {}  # "content" / "reasoning" / call index

    def delta(self, chunk: Any) -> ChatDelta | None:
        """The :class:`ChatDelta` of ``chunk``, or None when it carries nothing."""
        read = self._reader.delta(chunk)
        content = self._whole("content", read.content)
        reasoning = self._whole("reasoning", read.reasoning)
        tool_calls = self._fragments(read.tool_calls)
        finish_reason = read.finish_reason
        if finish_reason is not None and self._held:
            content, reasoning, tool_calls = self._flush_into(content, reasoning, tool_calls)
        if not (content or reasoning or tool_calls or finish_reason) and read.usage is None:
            return None
        return ChatDelta(
            content=content,
            reasoning=reasoning,
            tool_calls=tool_calls,
            usage=read.usage,
            finish_reason=finish_reason,
        )

    def flush(self) -> ChatDelta | None:
        """What is still held back (each half pair as U+FFFD), at the end of a reply."""
        if not self._held:
            return None
        content, reasoning, tool_calls = self._flush_into(None, None, ())
        return ChatDelta(content=content, reasoning=reasoning, tool_calls=tool_calls)

    def _flush_into(
        self, content: str | None, reasoning: str | None, tool_calls: tuple[ToolCallDelta, ...]
    ) -> tuple[str | None, str | None, tuple[ToolCallDelta, ...]]:
        held, self._held = self._held, {}
        if "content" in held:
            content = (content or "") + "\ufffd"
        if "reasoning" in held:
            reasoning = (reasoning or "") + "\ufffd"
        calls = [key for key in held if isinstance(key, int)]
        tool_calls += tuple(ToolCallDelta(index=index, arguments="\ufffd") for index in calls)
        return content, reasoning, tool_calls

    def _whole(self, channel: str | int, text: str | None) -> str | None:
        """``text`` after what ``channel`` held, minus a trailing high surrogate."""
        if text is None:
            return None
        text = self._held.pop(channel, "") + text
        if "\ud800" <= text[-1] <= "\udbff":
            # The other half of the pair comes in the next piece of this channel.
            self._held[channel] = text[-1]
            text = text[:-1]
        return fix_surrogates(text) or None

    def _fragments(self, read: tuple[ToolCallDelta, ...]) -> tuple[ToolCallDelta, ...]:
        fragments = []
        for fragment in read:
            arguments = self._whole(fragment.index, fragment.arguments)
            call_id = None if fragment.id is None else fix_surrogates(fragment.id)
            name = None if fragment.name is None else fix_surrogates(fragment.name)
            if call_id is None and name is None and arguments is None:
                continue  # only half a pair, held back
            fragments.append(
                ToolCallDelta(index=fragment.index, id=call_id, name=name, arguments=arguments)
            )
        return tuple(fragments)


_SURROGATE = re.compile("[\ud800-\udfff]")


def fix_surrogates(text: str) -> str:
    r"""``text`` with surrogate pairs joined and every lone surrogate replaced by U+FFFD.

    Example:
        >>> fix_surrogates("\ud83d\ude00 \ud83d") == "\U0001f600 \ufffd"
        True
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
