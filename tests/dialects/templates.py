"""Fixture replies rendered by a model's own chat template, not retyped.

A family's ``tests/fixtures/dialects/<name>/render.py`` keeps the template file beside
its ``cases.json`` (with the address and revision it was read from) and builds the cases
through :func:`reply`: the conversation rendered with the assistant's message, minus
the same conversation rendered with the generation prompt, is exactly the text the model
writes for that message.  The environment is the one Hugging Face's
``apply_chat_template`` renders in (sandboxed, ``trim_blocks``, ``lstrip_blocks``, the
loop controls, ``{% generation %}``, ``tojson`` with its keyword arguments,
``raise_exception``).

``python -m tests.fixtures.dialects.<name>.render`` writes the family's ``cases.json``
(``tests/fixtures/dialects/rendered.py``); the family tests check that each file is
what its script writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment


class _Generation(Extension):
    """``{% generation %}…{% endgeneration %}``: marks the assistant's tokens; renders its body."""

    tags = {"generation"}  # noqa: RUF012 - jinja2's own attribute

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)


USER: list[dict[str, Any]] = [{"role": "user", "content": "Help me with this."}]
"""The conversation the families' template cases answer."""


def environment() -> ImmutableSandboxedEnvironment:
    """The environment chat templates are rendered in by ``transformers``."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols", _Generation]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env


def reply(
    template: Path, messages: list[dict[str, Any]], assistant: dict[str, Any], **options: Any
) -> str:
    """The text the model writes for ``assistant`` after ``messages``, by ``template``."""
    compiled = environment().from_string(template.read_text(encoding="utf-8"))
    prompt = compiled.render(messages=messages, add_generation_prompt=True, **options)
    full = compiled.render(messages=[*messages, assistant], add_generation_prompt=False, **options)
    if not full.startswith(prompt):
        raise ValueError(
            "the template does not render the message after its generation prompt: "
            f"{prompt[-80:]!r} vs {full[len(prompt) - 80 : len(prompt) + 20]!r}"
        )
    return full[len(prompt) :]


def message(
    template: Path,
    messages: list[dict[str, Any]],
    assistant: dict[str, Any],
    opener: str,
    **options: Any,
) -> str:
    """The assistant's message as the template renders it, after its last ``opener``.

    For a reply whose generation prompt the template writes differently from the
    history (a server's ``</think>`` when thinking is off, say): the message's text
    after the template's own role marker.
    """
    compiled = environment().from_string(template.read_text(encoding="utf-8"))
    full = compiled.render(messages=[*messages, assistant], add_generation_prompt=False, **options)
    return full[full.rindex(opener) + len(opener) :]


def tool_call(name: str, arguments: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """One OpenAI-style tool call of an assistant message."""
    return {
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def cases_json(about: str, cases: list[dict[str, Any]]) -> str:
    """The text of a ``cases.json`` holding ``cases``."""
    return json.dumps({"about": about, "cases": cases}, ensure_ascii=False, indent=1) + "\n"
