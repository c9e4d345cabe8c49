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

A replacement may also be written in ``str.format`` syntax (``"{function_description}"``),
as older prompt code often is: :func:`format_template` reads such a text, checks its
fields against the variables the template gets (plain names only, as the sandbox allows
no attribute or index access either) and returns a :class:`FormatTemplate`, which
:func:`render` fills with ``str.format`` instead of Jinja.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Collection, Mapping
from importlib import resources
from typing import Any, Final

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from ..errors import ConfigError

__all__ = [
    "LANGUAGES",
    "TEMPLATE_NAMES",
    "FormatTemplate",
    "check_language",
    "format_template",
    "render",
    "template_source",
]

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
    "ernie_instructions",
    "gemma4_instructions",
    "glm_instructions",
    "granite_instructions",
    "gpt_oss_instructions",
    "hermes_instructions",
    "hunyuan_instructions",
    "images_note",
    "internlm_instructions",
    "kimi_instructions",
    "llama_instructions",
    "longcat_instructions",
    "minimax_m2_instructions",
    "mistral_instructions",
    "native_cancelled",
    "native_error",
    "observation",
    "parameters_block",
    "parse_error",
    "phi4_mini_instructions",
    "pythonic_instructions",
    "qwen3_coder_instructions",
    "returns_line",
    "seed_oss_instructions",
    "tool_heading",
    "tools_heading",
    "user_prompt",
    "xlam_instructions",
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


# --- str.format templates ---------------------------------------------------------------

# A field that starts with a name (``{name}``, ``{name!r}``, ``{name.attr}``...): a text
# with one, and no Jinja delimiter, is str.format syntax (so ``{a.b}`` alone is refused
# rather than sent with its braces).  A JSON object (``{"a": 1}``) is not such a field.
_FORMAT_FIELD: Final = re.compile(r"\{[^\W\d]\w*(?:[.\[!:][^{}]*)?\}")
_JINJA_DELIMITERS: Final = ("{{", "{%", "{#")
# A name followed by attribute or index access: ``a.b``, ``a[0]``.
_ACCESS: Final = re.compile(r"[^\W\d]\w*[.\[]")


class FormatTemplate(str):
    """A prompt template in ``str.format`` syntax, its fields checked (see :func:`format_template`).

    :func:`render` fills it with ``str.format``; everywhere else it is the text as written.
    """

    __slots__ = ()


def _format_fields(source: str, where: str) -> list[str]:
    """The field names of a ``str.format`` text, nested ones in format specs included."""
    try:
        parsed = list(string.Formatter().parse(source))
    except ValueError as exc:  # a single brace, an unclosed field
        raise ConfigError(
            f"{where}: not a valid str.format template ({exc}); write a literal brace as "
            "{{ or }}"
        ) from None
    names: list[str] = []
    for _, field, spec, _ in parsed:
        if field is None:
            continue
        names.append(field)
        if spec and "{" in spec:
            names.extend(_format_fields(spec, where))
    return names


def format_template(
    source: str, variables: Collection[str], *, where: str
) -> FormatTemplate | None:
    """Read a replacement template as ``str.format`` syntax, if it is written in it.

    A text is ``str.format`` syntax when it has no ``{{``, ``{%`` or ``{#`` and at least
    one ``{name}`` field (or one that starts with a name: ``{name.attr}``, ``{name!r}``);
    any other text is Jinja2 (None is returned).  Its fields must
    be plain names, each one a variable the template gets.

    Args:
        source: the template's text.
        variables: the names the template is rendered with.
        where: what the template is, for the error messages.

    Returns:
        The checked template, or None when ``source`` is not ``str.format`` syntax.

    Raises:
        ConfigError: a field with attribute or index access (``{a.b}``, ``{a[0]}``), a
            positional field (``{}``, ``{0}``), a name the template is not given (it
            would be sent with its braces), or a text ``str.format`` cannot read.

    Example:
        >>> template = format_template("Hello {name}!", {"name"}, where="greeting")
        >>> render("greeting", templates={"greeting": template}, name="Ada")
        'Hello Ada!'
        >>> format_template("Hello {{ name }}!", {"name"}, where="greeting") is None
        True
    """
    if any(delimiter in source for delimiter in _JINJA_DELIMITERS):
        return None
    if _FORMAT_FIELD.search(source) is None:
        return None
    known = ", ".join(sorted(variables))
    for field in _format_fields(source, where):
        if not field or field.isdigit():
            raise ConfigError(
                f"{where}: the field {{{field}}} is positional; name a variable ({known})"
            )
        if not field.isidentifier() and not _ACCESS.match(field):
            raise ConfigError(
                f"{where}: {{{field}}} is not a field of a variable ({known}); write a "
                "literal brace as {{ or }}"
            )
        if not field.isidentifier():
            raise ConfigError(
                f"{where}: the field {{{field}}} uses attribute or index access, which "
                f"templates do not allow; use a variable as it is ({known})"
            )
        if field not in variables:
            raise ConfigError(
                f"{where}: nothing fills the placeholder {{{field}}}; the template's "
                f"variables are {known} (write a literal brace as {{{{ or }}}})"
            )
    return FormatTemplate(source)


def _render_format(name: str, template: FormatTemplate, variables: Mapping[str, Any]) -> str:
    try:
        return template.format_map(variables)
    except (KeyError, AttributeError, IndexError, ValueError, TypeError) as exc:
        # A field checked against other variables, or a format spec its value refuses.
        raise ConfigError(f"prompt template {name!r}: {type(exc).__name__}: {exc}") from None


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
            (``"zh/observation"``), the text of a template, or a
            :class:`FormatTemplate` (filled with ``str.format``).
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
    if isinstance(override, FormatTemplate):
        return _render_format(name, override, variables)
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
