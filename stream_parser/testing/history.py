"""Checks that a chat history is one an OpenAI-compatible server accepts.

Servers (and the chat templates behind them) reject, or worse silently mangle, a
history whose tool calls and tool results do not line up.  An agent loop builds its
history piece by piece, so a test that checks the history it produced catches such a
mistake where it is made, not as a 400 from a real server later.

A history is valid when:

* every message has a known role; ``system`` / ``developer`` messages come only at
  the start, before any other message;
* an ``assistant`` message has content or tool calls (or both);
* each entry of its ``tool_calls`` has an ``id`` (unique in the whole history),
  ``type == "function"`` and a ``function`` with a ``name`` and a string ``arguments``;
* each call is answered exactly once by a ``tool`` message with that ``tool_call_id``,
  and those answers come directly after the assistant message, in call order, with no
  other message in between (a ``user`` message holding the images of those results
  comes only after all of them);
* no ``tool`` message answers an id that no assistant message asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..llm.base import Message

__all__ = ["assert_valid_history", "validate_history"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def _where(index: int, message: Mapping[str, Any]) -> str:
    role = message.get("role")
    return f"messages[{index}] ({role})" if isinstance(role, str) else f"messages[{index}]"


def _has_content(content: object) -> bool:
    """Whether an assistant's ``content`` says anything (None, "" and [] do not)."""
    if content is None:
        return False
    if isinstance(content, (str, list, tuple)):
        return len(content) > 0
    return True


def _call_problems(where: str, position: int, call: object) -> list[str]:
    """What is wrong with one entry of an assistant's ``tool_calls``."""
    at = f"{where}: tool_calls[{position}]"
    if not isinstance(call, Mapping):
        return [f"{at} is not an object"]
    problems = []
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        problems.append(f"{at} has no id")
    if call.get("type") != "function":
        problems.append(f"{at} has type {call.get('type')!r}, not 'function'")
    function = call.get("function")
    if not isinstance(function, Mapping):
        problems.append(f"{at} has no function")
        return problems
    name = function.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{at} has no function name")
    if not isinstance(function.get("arguments"), str):
        problems.append(
            f"{at} has arguments of type {type(function.get('arguments')).__name__}, "
            "not a JSON string"
        )
    return problems


def validate_history(
    messages: Sequence[Message] | Sequence[Mapping[str, Any]], *, pending_calls_ok: bool = False
) -> list[str]:
    """The problems of an OpenAI-format chat history; empty when it is valid.

    See the module docstring for the rules.  Each problem names the message it is
    about by its index (``messages[3] (tool)``).

    Args:
        messages: the history, as sent in a chat completion request.
        pending_calls_ok: accept a history that ends with an assistant message whose
            calls have no answer yet (a run paused for approval: its
            ``run.messages``); its calls may then be answered in part.

    Returns:
        One sentence per problem, in the order of the messages.

    Example:
        >>> validate_history([
        ...     {"role": "user", "content": "Weather in Paris?"},
        ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1",
        ...         "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        ... ])
        ["messages[1] (assistant): tool call 'c1' is never answered"]
    """
    problems: list[str] = []
    asked: dict[str, int] = {}  # call id -> index of the assistant message that made it
    answered: set[str] = set()
    # The calls of the last assistant message still waiting for their answer, in order.
    pending: list[str] = []
    pending_from = -1
    started = False  # a message other than system / developer was seen

    def close_block(before: str | None) -> None:
        """The open assistant block ends here: its unanswered calls are problems."""
        nonlocal pending
        where = _where(pending_from, messages[pending_from])
        for call_id in pending:
            if before is None:
                problems.append(f"{where}: tool call {call_id!r} is never answered")
            else:
                problems.append(
                    f"{where}: tool call {call_id!r} has no answer before {before}; "
                    "tool results must come directly after their assistant message"
                )
        pending = []

    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            problems.append(f"messages[{index}] is not an object")
            continue
        where = _where(index, message)
        role = message.get("role")
        if role not in _ROLES:
            problems.append(f"messages[{index}] has an unknown role {role!r}")
            continue

        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                problems.append(f"{where} has no tool_call_id")
            elif call_id not in asked:
                problems.append(f"{where} answers tool call {call_id!r}, which was never made")
            elif call_id in answered:
                problems.append(f"{where} answers tool call {call_id!r} a second time")
            elif call_id not in pending:
                problems.append(
                    f"{where} answers tool call {call_id!r} of messages[{asked[call_id]}], "
                    "but not directly after it"
                )
                answered.add(call_id)
            else:
                if pending[0] != call_id:
                    problems.append(
                        f"{where} answers tool call {call_id!r} before {pending[0]!r}; "
                        "tool results must follow the order of the calls"
                    )
                pending.remove(call_id)
                answered.add(call_id)
            started = True
            continue

        if pending:
            close_block(where)

        if role in ("system", "developer"):
            if started:
                problems.append(f"{where} comes after the conversation started; it must be first")
            continue
        started = True
        if role != "assistant":
            continue

        calls = message.get("tool_calls")
        if calls is None:
            calls = []
        if not isinstance(calls, list):
            problems.append(f"{where}: tool_calls is not a list")
            calls = []
        if not calls and not _has_content(message.get("content")):
            problems.append(f"{where} has neither content nor tool calls")
        for position, call in enumerate(calls):
            problems.extend(_call_problems(where, position, call))
            call_id = call.get("id") if isinstance(call, Mapping) else None
            if not isinstance(call_id, str) or not call_id:
                continue
            if call_id in asked:
                problems.append(
                    f"{where}: tool call id {call_id!r} is already used by "
                    f"messages[{asked[call_id]}]"
                )
                continue
            asked[call_id] = index
            pending.append(call_id)
        pending_from = index

    if pending and not pending_calls_ok:
        close_block(None)
    return problems


def assert_valid_history(messages: Sequence[Message] | Sequence[Mapping[str, Any]]) -> None:
    """Fail with every problem :func:`validate_history` finds, one per line.

    Raises:
        AssertionError: if the history is not valid.
    """
    problems = validate_history(messages)
    if problems:
        raise AssertionError("invalid chat history:\n" + "\n".join(f"- {p}" for p in problems))
