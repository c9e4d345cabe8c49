"""One reply of the model, recorded as it streams, and how it goes into the history.

:class:`Reply` takes every parse event of one step (the text, the calls, the errors the
model must hear about) and the raw deltas (:meth:`Reply.note`: the native calls' ids
and argument strings, exactly as sent).  Once the calls have run,
:meth:`Reply.messages` writes the reply and the answer to each of its calls: ``tool``
messages for native calls, one ``user`` message of observations for calls written in
the text (the observation text is built here from the prompt templates).
"""

from __future__ import annotations

import copy
import time
from collections.abc import (
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Final, cast

from ..core.chunks import ChatDelta
from ..core.events import (
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from ..llm.base import (
    AssistantMessage,
    ContentPart,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ..prompts import text as prompts
from ..prompts.templating import render
from ..tools import ToolResult

__all__ = ["Reply", "answer_images", "answer_text", "fill_answers", "image_slot"]


# A call that was announced or attempted and did not run: the model is told why.
_NOT_RUN: Final = frozenset(
    {
        ErrorType.UNCLOSED_TOOL.value,
        ErrorType.MALFORMED_TOOL.value,
        ErrorType.INVALID_PARAMS.value,
        ErrorType.TOOL_TOO_LARGE.value,
        ErrorType.UNKNOWN_TOOL.value,
    }
)
# The call stands, but something in it was dropped: the model is told too.
_WARNINGS: Final = frozenset({ErrorType.UNKNOWN_PARAM.value, ErrorType.DUPLICATE_PARAM.value})
# A call the agent did not run, by its own decision (a limit, a denial, a cut reply).
_REFUSED: Final = frozenset(
    {ErrorType.TOOL_CALL_LIMIT.value, ErrorType.DENIED.value, "truncated", "usage_limit"}
)
# About the reply as a whole.
_REPLY_ERRORS: Final = frozenset({ErrorType.TRUNCATED.value, ErrorType.STREAM_ERROR.value})

# --- one reply ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Observed:
    """Something in a reply the model is told about, with the tool it concerns."""

    label: str
    event: ToolCallEvent | ParseErrorEvent
    position: int = -1  # for a call: its position among the reply's calls


class _NativeCall:
    """A native call as the model sent it: its id, name and arguments string."""

    __slots__ = ("arguments", "call_id", "name")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name = ""
        self.arguments: list[str] = []


class Reply:
    """What the loop keeps of one reply while it streams: content, calls, failures."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.content: list[str] = []
        self.visible: list[str] = []
        self.calls: list[ToolCallEvent] = []
        self.observed: list[_Observed] = []
        self.native: dict[int, _NativeCall] = {}
        self.failed = False
        self.finish_reason: str | None = None
        self.stream_error: str | None = None
        self.finished = False
        # perf_counter() at the first text, reasoning or call fragment; None before it.
        self.first_token: float | None = None
        # Seconds each call took, by its position among the reply's calls.
        self.tool_seconds: dict[int, float] = {}
        self._names: dict[int, str] = {}
        self._open: str | None = None

    def note(self, delta: ChatDelta) -> None:
        """Keep what one delta of the model brings: content and native calls as sent."""
        if self.first_token is None and (delta.content or delta.reasoning or delta.tool_calls):
            self.first_token = time.perf_counter()
        if delta.content:
            self.content.append(delta.content)
        if delta.tool_calls:
            for fragment in delta.tool_calls:
                call = self.native.get(fragment.index)
                if call is None:
                    call = self.native[fragment.index] = _NativeCall()
                if fragment.id and call.call_id is None:
                    call.call_id = fragment.id
                if fragment.name and fragment.name != call.name:
                    call.name += fragment.name
                if fragment.arguments:
                    call.arguments.append(fragment.arguments)
        if delta.finish_reason is not None:
            self.finish_reason = delta.finish_reason
        if delta.error is not None:
            self.stream_error = delta.error

    @property
    def text(self) -> str:
        """The reply's content, verbatim."""
        return "".join(self.content)

    @property
    def visible_text(self) -> str:
        """The text events of the reply (no thinking, no tool markup)."""
        return "".join(self.visible)

    @property
    def cut(self) -> bool:
        """Whether the reply was cut by the model's length limit."""
        return self.finish_reason == "length"

    @property
    def needs_answer(self) -> bool:
        """Whether the model must hear back: a call, or a call that failed."""
        return bool(self.calls) or self.failed

    def take(self, event: ParseEvent) -> None:
        """Note one parse event of the reply."""
        if isinstance(event, TextOutputEvent):
            self.visible.append(event.text)
        elif isinstance(event, ToolCallStartEvent):
            self._names[event.call_index] = event.tool_name
            self._open = event.tool_name
        elif isinstance(event, ToolCallEvent):
            self.observed.append(_Observed(event.tool_name, event, len(self.calls)))
            self.calls.append(event)
            self._open = None
        elif isinstance(event, ParseErrorEvent):
            self._error(event)

    def _error(self, event: ParseErrorEvent) -> None:
        kind = event.error_type
        if kind in _NOT_RUN:
            self.observed.append(_Observed(self._label(event), event))
            self.failed = True
            self._open = None
        elif kind in _WARNINGS:
            self.observed.append(_Observed(self._label(event), event))
        elif kind in _REPLY_ERRORS:
            self.observed.append(_Observed("reply", event))
        # Other errors (an unclosed thinking block, a plugin's block) concern no call.

    def _label(self, event: ParseErrorEvent) -> str:
        if event.tool_name:
            return event.tool_name
        if event.call_index is not None and event.call_index in self._names:
            return self._names[event.call_index]
        return self._open or "tool call"

    # -- into the history -------------------------------------------------------------------

    def native_ids(self) -> dict[str, _NativeCall]:
        """The native calls by id (an id the server did not send is made up)."""
        calls: dict[str, _NativeCall] = {}
        for index, call in sorted(self.native.items()):
            if call.call_id is None:
                call.call_id = f"call_{self.step}_{index}"
            calls[call.call_id] = call
        return calls

    def messages(
        self,
        results: Mapping[int, ToolResult],
        not_run: Mapping[int, ToolResult],
        *,
        language: str = "en",
        templates: prompts.Templates = None,
        pending: Mapping[int, str] | None = None,
    ) -> list[Message]:
        """The reply and the answers to its calls, as they go into the history.

        The assistant message carries the content verbatim (None without text when
        there are native calls) and the native calls as ``tool_calls``, exactly as the
        model sent them; then one ``tool`` message per native call in call order; then
        one ``user`` message with the images the native calls returned; then one
        ``user`` message with the observations of the calls written in the text.

        A reply with neither text nor native calls (empty, only reasoning, or failed,
        cut or cancelled before its first token) gives no message: it said nothing the
        model must see again, and an assistant message needs content or calls.

        Args:
            results: call position -> result, for the calls that ran.
            not_run: call position -> why it did not run (limit, denial, cut reply).
            language: the language of the observations, ``"en"`` or ``"zh"``.
            templates: replacement prompt templates by name.
            pending: call position -> a placeholder written where its answer goes (a
                call deferred at a pause, answered when the run resumes).  Where its
                images may go is kept too (:func:`image_slot` in the images message of
                native calls; after the placeholder in the observations, then written
                as content parts), so that :func:`fill_answers` gives the messages that
                the same results would have given here.
        """
        say = (language, templates)
        pending = pending or {}
        native = self.native_ids()
        content = self.text
        if not content and not native:
            return []
        assistant = AssistantMessage(role="assistant", content=content)
        if native:
            assistant["content"] = content or None
            assistant["tool_calls"] = [
                ToolCall(
                    id=call_id,
                    type="function",
                    function={"name": call.name, "arguments": "".join(call.arguments)},
                )
                for call_id, call in native.items()
            ]
        out: list[Message] = [assistant]
        answers: dict[str, tuple[str, ToolResult | None]] = {}
        observations: list[tuple[str, ToolResult | None]] = []
        for item in self.observed:
            result: ToolResult | None = None
            if item.position >= 0:
                result = results.get(item.position) or not_run.get(item.position)
            call_id = item.event.call_id
            placeholder = pending.get(item.position) if item.position >= 0 else None
            if call_id is not None and call_id in native:
                text = placeholder or _native_text(item.event, result, *say)
                if call_id in answers:
                    # A warning about a call, then the call: one message says both.
                    earlier, _ = answers[call_id]
                    text = f"{earlier}\n\n{text}"
                answers[call_id] = (text, result)
            else:
                text = placeholder or _observation_text(item.label, item.event, result, *say)
                observations.append((text, result))
        images: list[ContentPart] = []
        # Where the images of a pending native call go, once it is answered.
        image_slots = {
            self.calls[position].call_id: image_slot(placeholder)
            for position, placeholder in pending.items()
        }
        for call_id, call in native.items():
            text, result = answers.get(call_id) or (prompts.say("native_cancelled", *say), None)
            out.append(ToolMessage(role="tool", tool_call_id=call_id, content=text, name=call.name))
            if call_id in image_slots:
                images.append({"type": "text", "text": image_slots[call_id]})
            elif result is not None and result.images:
                images.append(
                    {
                        "type": "text",
                        "text": render("images_note", *say, name=call.name, call_id=call_id),
                    }
                )
                images.extend(cast("list[ContentPart]", copy.deepcopy(list(result.images))))
        if images:
            out.append(UserMessage(role="user", content=images))
        # An error of the reply as a whole (cut, broken) is told along with its calls;
        # alone, it concerns no call and needs no answer.
        if any(label for label, _ in observations if not label.startswith("[reply]")):
            out.append(_observation_message(observations, as_parts=bool(pending)))
        return out


def image_slot(placeholder: str) -> str:
    """What marks where the images of a pending native call go, in the answers kept."""
    return f"{placeholder}images"


def fill_answers(
    answers: Sequence[Message],
    texts: Mapping[str, str],
    images: Mapping[str, Sequence[ContentPart]],
) -> list[Message]:
    """The answers kept at a pause, with the pending calls' answers in their places.

    Args:
        answers: what :meth:`Reply.messages` wrote with ``pending`` (not changed).
        texts: each placeholder -> the answer's text.
        images: the :func:`image_slot` of a native call, or the placeholder of a call
            written in text -> the content parts its answer brings (left out: none).

    Returns:
        The messages :meth:`Reply.messages` gives for the same results: a slot with no
        images goes, and a user message left with text parts only is written as one
        string (an images message left empty goes).
    """
    slots = {image_slot(placeholder) for placeholder in texts}
    filled: list[Message] = []
    for message in answers:
        content = message.get("content")
        if isinstance(content, str):
            filled.append(cast(Message, {**message, "content": _fill(content, texts)}))
            continue
        if not isinstance(content, list):
            filled.append(message)
            continue
        parts: list[ContentPart] = []
        for part in content:
            text = part.get("text") if part.get("type") == "text" else None
            if not isinstance(text, str):
                parts.append(part)
            elif text in slots:
                parts.extend(copy.deepcopy(list(images.get(text, ()))))
            else:
                parts.append({"type": "text", "text": _fill(text, texts)})
                for placeholder in texts:
                    if placeholder in text:
                        parts.extend(copy.deepcopy(list(images.get(placeholder, ()))))
        if all(part.get("type") == "text" for part in parts):
            if not parts:
                continue
            joined = "\n\n".join(cast(str, part.get("text")) for part in parts)
            filled.append(cast(Message, {**message, "content": joined}))
        else:
            filled.append(cast(Message, {**message, "content": parts}))
    return filled


def answer_images(
    native: bool,
    name: str,
    call_id: str,
    placeholder: str,
    result: ToolResult,
    language: str = "en",
    templates: prompts.Templates = None,
) -> dict[str, list[ContentPart]]:
    """Where a pending call's images go among the kept answers (for :func:`fill_answers`).

    They are what :meth:`Reply.messages` would have written for them: after the
    observation of a call written in text; in the images message, after a note, for a
    native call.
    """
    if not result.images:
        return {}
    shown = cast("list[ContentPart]", list(result.images))
    if not native:
        return {placeholder: shown}
    note = render("images_note", language, templates=templates, name=name, call_id=call_id)
    return {image_slot(placeholder): [{"type": "text", "text": note}, *shown]}


def _fill(text: str, texts: Mapping[str, str]) -> str:
    for placeholder, answer in texts.items():
        if placeholder in text:
            text = text.replace(placeholder, answer)
    return text


def answer_text(
    native: bool,
    label: str,
    result: ToolResult,
    language: str = "en",
    templates: prompts.Templates = None,
) -> str:
    """What answers a call that ran (or was refused): a ``tool`` message's or an observation."""
    say = (language, templates)
    if native:
        if result.is_error and not result.text.startswith("Error"):
            return render("native_error", *say, code=result.error_type, text=result.text)
        return result.text
    if result.is_error:
        if result.error_type in _REFUSED:
            code = result.error_type or ""
            return prompts.not_executed_observation(label, code, result.text, *say)
        return prompts.error_observation(label, result.error_type, result.text, *say)
    return _result_observation(label, result.text, *say)


# The word of the shipped ``observation`` template for a call that ran, by language.
_RESULT_WORDS: Final = {"en": "result", "zh": "结果"}


def _result_observation(
    label: str, text: str, language: str = "en", templates: prompts.Templates = None
) -> str:
    """:func:`~stream_parser.prompts.text.result_observation`, the most frequent one.

    With the shipped template it is written here, without rendering it (about 10 µs
    less a call); a test checks that both give the same text.
    """
    word = _RESULT_WORDS.get(language)
    if word is None or (templates and "observation" in templates):
        return prompts.result_observation(label, text, language, templates)
    return f"[{label}] {word}:\n{text}"


def _native_text(
    event: ToolCallEvent | ParseErrorEvent,
    result: ToolResult | None,
    language: str = "en",
    templates: prompts.Templates = None,
) -> str:
    """The content of the ``tool`` message that answers a native call."""
    say = (language, templates)
    if isinstance(event, ParseErrorEvent):
        text = _error_text(event, *say)
        if event.error_type in _WARNINGS:
            return prompts.warning_observation(
                event.tool_name or "tool", event.error_type, text, *say
            )
        return render("native_error", *say, code=event.error_type, text=text)
    if result is None:
        return prompts.say("native_cancelled", *say)
    if result.is_error and not result.text.startswith("Error"):
        # A tool's own error texts already say so; the agent's are prefixed here.
        return render("native_error", *say, code=result.error_type, text=result.text)
    return result.text


def _observation_text(
    label: str,
    event: ToolCallEvent | ParseErrorEvent,
    result: ToolResult | None,
    language: str = "en",
    templates: prompts.Templates = None,
) -> str:
    """What the model is told about one call (or error) written in the text of its reply."""
    say = (language, templates)
    if isinstance(event, ToolCallEvent):
        if result is None:
            return prompts.cancelled_observation(label, *say)
        if result.is_error:
            if result.error_type in _REFUSED:
                code = result.error_type or ""
                return prompts.not_executed_observation(label, code, result.text, *say)
            return prompts.error_observation(label, result.error_type, result.text, *say)
        return _result_observation(label, result.text, *say)
    kind = event.error_type
    text = _error_text(event, *say)
    if kind in _WARNINGS:
        return prompts.warning_observation(label, kind, text, *say)
    if kind in _REPLY_ERRORS and event.call_index is None:
        return prompts.error_observation(label, kind, text, *say)
    return prompts.not_executed_observation(label, kind, text, *say)


def _error_text(
    event: ParseErrorEvent, language: str = "en", templates: prompts.Templates = None
) -> str:
    """What the model reads about a parse error, in its language, from its type and details."""
    return render(
        "parse_error",
        language,
        templates=templates,
        error_type=event.error_type,
        tool=event.tool_name or "",
        message=event.message,
        details=list(event.details),
    )


def _observation_message(
    entries: Sequence[tuple[str, ToolResult | None]], *, as_parts: bool = False
) -> UserMessage:
    """One user message with the observations; with images (or ``as_parts``), content parts."""
    if not as_parts and not any(result is not None and result.images for _, result in entries):
        return UserMessage(role="user", content="\n\n".join(text for text, _ in entries))
    parts: list[ContentPart] = []
    for text, result in entries:
        parts.append({"type": "text", "text": text})
        if result is not None:
            parts.extend(cast("list[ContentPart]", copy.deepcopy(list(result.images))))
    return UserMessage(role="user", content=parts)
