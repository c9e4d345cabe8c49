"""The sandboxed renderer of the prompt templates.

Every template is rendered in a :class:`jinja2.sandbox.SandboxedEnvironment` with
:class:`jinja2.StrictUndefined`: the values a template is given (tool descriptions,
results, a user's input) are data and are never parsed as template code, a template
written by a user cannot reach Python internals, and a variable that is missing is an
error that names it instead of silently becoming an empty string.

The shipped templates live in ``templates/<language>/<name>.j2`` inside the package.
A template is chosen by its name and a language (``render("observation", "zh", ...)``);
a caller replaces one by passing ``templates={"observation": ...}``, whose value is the
name of a shipped template (``"zh/observation"``) or the text of a template.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from ..errors import ConfigError

__all__ = ["LANGUAGES", "TEMPLATE_NAMES", "check_language", "render", "template_source"]

LANGUAGES: Final = ("en", "zh")
"""The languages every shipped template is written in."""

TEMPLATE_NAMES: Final = (
    "agent_note",
    "call_rules",
    "chat_tools",
    "context",
    "deepseek_instructions",
    "example_call_block",
    "final_answer",
    "function_continue",
    "function_empty",
    "function_retry",
    "function_returns",
    "function_system",
    "function_user",
    "gemma4_instructions",
    "glm_instructions",
    "gpt_oss_instructions",
    "hermes_instructions",
    "images_note",
    "kimi_instructions",
    "llama_instructions",
    "minimax_m2_instructions",
    "mistral_instructions",
    "native_cancelled",
    "native_error",
    "observation",
    "parameters_block",
    "parse_error",
    "pythonic_instructions",
    "qwen3_coder_instructions",
    "returns_line",
    "seed_oss_instructions",
    "tool_heading",
    "tools_heading",
    "user_prompt",
    "xml_instructions",
    "xml_preface",
)
"""The names of the shipped templates (each exists in every language)."""


def check_language(language: str) -> str:
    """Return ``language`` if templates exist in it.

    Raises:
        ConfigError: a language without templates.
    """
    if language not in LANGUAGES:
        raise ConfigError(f"language must be one of {LANGUAGES!r}, got {language!r}")
    return language


def _load(path: str) -> str | None:
    """The text of a shipped template, ``lang/name``, or None when there is none."""
    language, _, name = path.partition("/")
    if language not in LANGUAGES or name not in TEMPLATE_NAMES:
        return None
    file = resources.files(__package__ or "stream_parser.prompts") / "templates" / language
    return (file / f"{name}.j2").read_text(encoding="utf-8")


@functools.cache
def _environment() -> SandboxedEnvironment:
    # No autoescape: prompts are plain text, not HTML.  keep_trailing_newline=False drops
    # the newline every template file ends with.
    return SandboxedEnvironment(
        loader=jinja2.FunctionLoader(_load),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )


def template_source(name: str, language: str = "en") -> str:
    r"""The text of a shipped template (to read it, or start your own from it).

    Example:
        >>> template_source("tool_heading")
        '## {{ name }}\n'
    """
    source = _load(f"{check_language(language)}/{name}")
    if source is None:
        raise ConfigError(f"no prompt template named {name!r}; known: {TEMPLATE_NAMES!r}")
    return source


@functools.cache
def _compiled(source: str) -> jinja2.Template:
    return _environment().from_string(source)


def render(
    name: str,
    language: str = "en",
    /,
    templates: Mapping[str, str] | None = None,
    **variables: Any,
) -> str:
    """Render the template ``name`` in ``language`` with ``variables``.

    Args:
        name: a shipped template's name (see :data:`TEMPLATE_NAMES`).
        language: ``"en"`` or ``"zh"``.
        templates: replacements by name: the name of a shipped template
            (``"zh/observation"``) or the text of a template.
        **variables: the template's variables; their values are data, never template
            code.

    Raises:
        ConfigError: an unknown language or template, a variable the template needs that
            is missing (named in the message), or a replacement that is not a valid
            template or does something the sandbox forbids.

    Example:
        >>> render("tool_heading", "en", name="{{ 7 * 7 }}")
        '## {{ 7 * 7 }}'
    """
    check_language(language)
    override = templates.get(name) if templates else None
    try:
        if override is None:
            template = _environment().get_template(f"{language}/{name}")
        elif _load(override) is not None:
            template = _environment().get_template(override)
        else:
            template = _compiled(override)
        return template.render(variables)
    except jinja2.TemplateNotFound:
        raise ConfigError(f"no prompt template named {name!r}; known: {TEMPLATE_NAMES!r}") from None
    except jinja2.UndefinedError as exc:
        raise ConfigError(f"prompt template {name!r}: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise ConfigError(f"prompt template {name!r}: {exc}") from None
