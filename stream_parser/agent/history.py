"""History: the conversation a run starts from, and what of it is sent.

:func:`start_history` puts the input after an earlier conversation, the system prompt
first (or opening the first user message, for templates without a system role).
:func:`trim_history` keeps the last turns, never separating a reply's calls from their
answers.  :class:`ContextStep` is an earlier step of the caller's own, shown in a
context block of the first user message.
"""

from __future__ import annotations

import datetime
from collections.abc import (
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, cast

from ..errors import ConfigError
from ..llm.base import (
    Message,
    SystemMessage,
    UserMessage,
)

__all__ = ["ContextStep", "start_history", "trim_history"]


def start_history(
    input: str | Sequence[Message],
    history: Sequence[Message] | None,
    instructions: str,
    role: str = "system",
) -> list[Message]:
    r"""The conversation a run starts from: history, then the input, system prompt first.

    ``instructions`` is the system prompt.  With ``role="user"`` it opens the first user
    message instead of being a system message of its own (once: a conversation that
    already opens with it is left as it is).  A conversation that starts with a system or
    developer message, or an empty system prompt, is left as it is too.

    Example:
        >>> start_history("Hi", None, "Be brief.", "user")
        [{'role': 'user', 'content': 'Be brief.\n\nHi'}]
    """
    messages: list[Message] = []
    for part in (history or (), input):
        if isinstance(part, str):
            messages.append(UserMessage(role="user", content=part))
            continue
        items = list(part)
        if not all(isinstance(message, dict) for message in items):
            raise TypeError("input and history must be a string or a sequence of message dicts")
        messages.extend(items)
    first_role = messages[0].get("role") if messages else None
    if not instructions or first_role in ("system", "developer"):
        return messages
    if role == "system":
        messages.insert(0, SystemMessage(role="system", content=instructions))
        return messages
    # Some chat templates drop or reject a system message: the instructions then open the
    # first user message (once: a continued conversation already starts with them).
    for index, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            if not content.startswith(instructions):
                text = f"{instructions}\n\n{content}" if content else instructions
                messages[index] = cast("Message", {**message, "content": text})
        elif isinstance(content, list):
            first = content[0] if content else None
            if not (isinstance(first, dict) and first.get("text") == instructions):
                opening: dict[str, str] = {"type": "text", "text": instructions}
                messages[index] = cast("Message", {**message, "content": [opening, *content]})
        return messages
    messages.insert(0, UserMessage(role="user", content=instructions))
    return messages


@dataclass(frozen=True)
class ContextStep:
    """An earlier step of your own, shown in a context block.

    Attributes:
        name: the step's (tool's) name.
        description: what the step does.
        output: what it gave, as text.
    """

    name: str
    description: str
    output: str


def _context_step(step: ContextStep | Mapping[str, Any]) -> ContextStep:
    if isinstance(step, ContextStep):
        return step
    if isinstance(step, Mapping):
        try:
            return ContextStep(
                str(step["name"]), str(step.get("description", "")), str(step["output"])
            )
        except KeyError as exc:
            raise ConfigError(f"a context step needs a {exc.args[0]!r}: {step!r}") from None
    raise ConfigError(f"a context step is a ContextStep or a mapping, not {step!r}")


def _now() -> datetime.datetime:
    return datetime.datetime.now().astimezone()


def trim_history(messages: Sequence[Message], turns: int | None) -> list[Message]:
    """The last ``turns`` turns of a conversation, after its system message.

    A turn starts at a ``user`` message that does not follow a ``tool`` message (the
    user message with the images of native calls belongs to their turn), so an
    assistant message with calls is never separated from its ``tool`` messages.

    Args:
        messages: the conversation.
        turns: how many turns to keep; None keeps all.

    Example:
        >>> chat = [
        ...     {"role": "system", "content": "S"},
        ...     {"role": "user", "content": "a"},
        ...     {"role": "assistant", "content": None, "tool_calls": []},
        ...     {"role": "tool", "tool_call_id": "1", "content": "r"},
        ...     {"role": "assistant", "content": "done"},
        ...     {"role": "user", "content": "b"},
        ... ]
        >>> [m["content"] for m in trim_history(chat, 1)]
        ['S', 'b']
        >>> [m["content"] for m in trim_history(chat, 2)]
        ['S', 'a', None, 'r', 'done', 'b']
    """
    items = list(messages)
    if turns is None:
        return items
    head = 1 if items and items[0].get("role") in ("system", "developer") else 0
    starts = [
        index
        for index in range(head, len(items))
        if items[index].get("role") == "user"
        and (index == head or items[index - 1].get("role") != "tool")
    ]
    if len(starts) <= turns:
        return items
    return items[:head] + items[starts[-turns] :]
