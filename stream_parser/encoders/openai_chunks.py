"""Parser events as OpenAI chat-completion chunks: what ``stream-parser serve`` sends.

A client of an OpenAI-compatible server reads a reply as ``chat.completion.chunk``
objects (or one ``chat.completion``).  :class:`ChoiceEncoder` turns the parser's events
of one choice into the ``choices[i]`` entries of such chunks, so that a client gets the
calls the parser read, validated, as native ``tool_calls``.

Theory of operation
-------------------

* **Text** is ``delta.content``, sent with the events that decide it: nothing is held
  beyond what the parser holds (a marker's look-ahead).  **Reasoning**
  (``ThinkingDeltaEvent``) is ``delta.reasoning_content``, or the field named.
* **A call** is sent once it has closed and validated (``ToolCallEvent``), never before:
  one ``tool_calls`` entry with ``id`` (the format's own, else a generated ``call_...``),
  ``type`` and ``function``, whose ``arguments`` is the JSON of
  ``model_dump(mode="json", by_alias=True, exclude_unset=True)``: the schema's own
  property names, and no default the model did not write.  ``index`` counts the calls
  sent (0, 1, 2), with no gap where a call failed.
* **A call that cannot run** (``unclosed_tool``, ``malformed_tool``, ``unknown_tool``,
  ``invalid_params``, ``tool_too_large``) is never a tool call.  Written in the text, its
  raw text reaches the client as content, as the parser delivers it (text events inside
  the error's span); with ``bad_calls="error"`` that text is replaced by one line saying
  what was wrong.  A native call that fails goes out as content too: its name and raw
  arguments (or that line).
* **The end**: ``finish_reason`` is ``"tool_calls"`` when calls were sent and the
  upstream said ``"stop"`` (or ``"tool_calls"``); a ``"tool_calls"`` with no call sent
  becomes ``"stop"``; anything else (``"length"``...) stays.
* Events with no place in a chunk (framing, deltas of calls still open, notices, usage,
  stream errors, anything unknown) are left out.

Every entry is complete in the sense strict clients need: ``index`` on every choice,
``role`` on the first delta (:meth:`ChoiceEncoder.start`), ``id`` and ``type`` on every
call, a ``finish_reason`` at the end.  :func:`chunk` wraps entries with the upstream's
``id``, ``created``, ``model`` and ``system_fingerprint``; :func:`completion_message`
folds the entries of a whole reply into a ``chat.completion``'s message.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from ..core.events import (
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)

__all__ = ["BAD_CALL_ERRORS", "ChoiceEncoder", "chunk", "completion_message", "new_call_id"]

BAD_CALL_ERRORS: Final = frozenset(
    {"unclosed_tool", "malformed_tool", "unknown_tool", "invalid_params", "tool_too_large"}
)
"""The errors of a call that cannot run: never sent as a tool call."""

BadCalls = Literal["text", "error"]


def new_call_id() -> str:
    """A call id in OpenAI's form, for a call whose format gave it none."""
    return "call_" + uuid.uuid4().hex[:24]


class ChoiceEncoder:
    """The parser's events of one choice -> that choice's entries of chat chunks.

    Args:
        index: the choice's index (``n > 1`` replies have several).
        reasoning_field: the delta field the reasoning goes in.
        bad_calls: a call that cannot run goes out as its text (``"text"``) or as one
            line saying what was wrong (``"error"``).

    Example:
        >>> from stream_parser.core.events import TextOutputEvent
        >>> encoder = ChoiceEncoder()
        >>> encoder.start()["delta"]
        {'role': 'assistant', 'content': ''}
        >>> [e["delta"] for e in encoder.encode([TextOutputEvent(text="Hi", span=(0, 2))])]
        [{'content': 'Hi'}]
        >>> encoder.finish("stop")["finish_reason"]
        'stop'
    """

    __slots__ = ("_args", "_bad", "_field", "_hidden", "_names", "calls_sent", "index")

    def __init__(
        self,
        index: int = 0,
        *,
        reasoning_field: str = "reasoning_content",
        bad_calls: BadCalls = "text",
    ) -> None:
        if bad_calls not in ("text", "error"):
            raise ValueError(f'bad_calls must be "text" or "error", not {bad_calls!r}')
        self.index = index
        self.calls_sent = 0
        """How many tool calls have been sent (the next call's ``index``)."""
        self._field = reasoning_field
        self._bad = bad_calls
        # The span whose text is replaced by an error line (bad_calls="error").
        self._hidden: tuple[int, int] | None = None
        # Native calls by the parser's call index: name and raw arguments, so that a
        # failed one can go out as content.
        self._names: dict[int, str] = {}
        self._args: dict[int, list[str]] = {}

    def start(self) -> dict[str, Any]:
        """The first entry of the choice: its role."""
        return self._entry({"role": "assistant", "content": ""})

    def encode(self, events: Iterable[ParseEvent]) -> list[dict[str, Any]]:
        """The entries for ``events``: runs of text or reasoning merged, each call alone."""
        entries: list[dict[str, Any]] = []
        kind: str | None = None  # the delta field of the run being gathered
        run: list[str] = []
        for event in events:
            piece: str | None = None
            field = "content"
            if isinstance(event, TextOutputEvent):
                hidden = self._hidden
                if hidden is not None and hidden[0] <= event.span[0] < hidden[1]:
                    continue  # the raw text of a bad call, replaced by its error line
                piece = event.text
            elif isinstance(event, ThinkingDeltaEvent):
                piece, field = event.delta, self._field
            elif isinstance(event, ToolCallEvent):
                self._flush(entries, kind, run)
                kind, run = None, []
                entries.append(self._call(event))
                continue
            elif isinstance(event, ParseErrorEvent):
                piece = self._bad_call(event)
            elif isinstance(event, ToolCallStartEvent) and _is_side(event.span):
                self._names[event.call_index] = event.tool_name
            elif isinstance(event, ToolArgumentsDeltaEvent) and _is_side(event.span):
                self._args.setdefault(event.call_index, []).append(event.delta)
            if not piece:
                continue
            if field != kind:
                self._flush(entries, kind, run)
                kind, run = field, []
            run.append(piece)
        self._flush(entries, kind, run)
        return entries

    def finish(self, upstream_reason: str | None) -> dict[str, Any]:
        """The last entry of the choice, with its ``finish_reason``.

        Args:
            upstream_reason: the upstream's ``finish_reason`` (None: it gave none, which
                is read as ``"stop"``).
        """
        reason = upstream_reason or "stop"
        if self.calls_sent and reason in ("stop", "tool_calls"):
            reason = "tool_calls"
        elif reason == "tool_calls":
            reason = "stop"  # calls were announced, but none could be sent
        entry = self._entry({})
        entry["finish_reason"] = reason
        return entry

    # -- the pieces ------------------------------------------------------------------------

    def _entry(self, delta: dict[str, Any]) -> dict[str, Any]:
        return {"index": self.index, "delta": delta, "logprobs": None, "finish_reason": None}

    def _flush(self, entries: list[dict[str, Any]], kind: str | None, run: list[str]) -> None:
        if kind is not None and run:
            entries.append(self._entry({kind: "".join(run)}))

    def _call(self, event: ToolCallEvent) -> dict[str, Any]:
        instance: Any = event.tool_instance
        if hasattr(instance, "model_dump"):
            arguments = instance.model_dump(mode="json", by_alias=True, exclude_unset=True)
        else:  # a mapping of arguments (a tool registered without a model class)
            arguments = dict(instance) if isinstance(instance, Mapping) else {}
        call = {
            "index": self.calls_sent,
            "id": event.call_id or new_call_id(),
            "type": "function",
            "function": {
                "name": event.tool_name,
                "arguments": json.dumps(arguments, ensure_ascii=False),
            },
        }
        self.calls_sent += 1
        return self._entry({"tool_calls": [call]})

    def _bad_call(self, event: ParseErrorEvent) -> str | None:
        """What a call that cannot run leaves in the content, if anything."""
        if event.error_type not in BAD_CALL_ERRORS:
            return None
        native = _is_side(event.span)
        if self._bad == "error":
            if not native:
                self._hidden = event.span  # its raw text follows: replaced by this line
            return _error_line(event)
        if not native:
            return None  # its raw text follows as text events
        index = event.call_index
        name = self._names.get(index, event.tool_name) if index is not None else event.tool_name
        raw = "".join(self._args.get(index, ())) if index is not None else event.context or ""
        return f"{name or ''}({raw})"


def _is_side(span: tuple[int, int]) -> bool:
    """A zero-width span: the event came from a side channel (a native call)."""
    return span[0] == span[1]


def _error_line(event: ParseErrorEvent) -> str:
    message = " ".join(line.strip() for line in event.message.splitlines() if line.strip())
    return f"\n[tool call not run ({event.error_type}): {message}]\n"


def chunk(
    choices: Sequence[Mapping[str, Any]],
    *,
    id: str,
    created: int,
    model: str,
    system_fingerprint: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` holding ``choices``, with the upstream's identity."""
    out: dict[str, Any] = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
    }
    if system_fingerprint is not None:
        out["system_fingerprint"] = system_fingerprint
    if usage is not None:
        out["usage"] = dict(usage)
    out["choices"] = list(choices)  # last: a writer may encode the rest once per reply
    return out


def completion_message(
    entries: Iterable[Mapping[str, Any]], *, reasoning_field: str = "reasoning_content"
) -> tuple[dict[str, Any], str | None]:
    """The ``message`` of a whole reply and its ``finish_reason``, from one choice's entries.

    Example:
        >>> encoder = ChoiceEncoder()
        >>> entries = [encoder.start(), *encoder.encode([TextOutputEvent(text="Hi")])]
        >>> completion_message([*entries, encoder.finish("stop")])
        ({'role': 'assistant', 'content': 'Hi'}, 'stop')
    """
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    finish: str | None = None
    for entry in entries:
        delta = entry.get("delta") or {}
        if delta.get("content"):
            content.append(delta["content"])
        if delta.get(reasoning_field):
            reasoning.append(delta[reasoning_field])
        for call in delta.get("tool_calls") or ():
            calls.append({key: value for key, value in call.items() if key != "index"})
        if entry.get("finish_reason") is not None:
            finish = entry["finish_reason"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if message["content"] is None and not calls:
        message["content"] = ""
    if reasoning:
        message[reasoning_field] = "".join(reasoning)
    if calls:
        message["tool_calls"] = calls
    return message, finish
