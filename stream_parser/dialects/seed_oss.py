r"""The seed_oss dialect: Seed-OSS's calls, qwen3_coder's tags inside ``<seed:tool_call>``.

Written by ByteDance's open-weight `seed_oss` models (their chat template renders history calls the
same way)::

    <seed:tool_call>
    <function=get_weather>
    <parameter=city>Paris</parameter>
    </function>
    </seed:tool_call>

Theory of operation.  The inside of a block is Qwen3-Coder's ``<function=NAME>`` and
``<parameter=NAME>`` markup, so :class:`SeedOssReader` is the qwen3_coder reader with
Seed's marker names (a ``</function>`` in a value followed by ``<seed:tool_call>`` is
another call) and this format's values: the template writes each value right after its tag and
right before ``</parameter>``, with no framing newline, so a string is exactly what is
between the tags.  The reader's recovery of a missing ``</parameter>`` (a line that
opens the next parameter) applies as it does to qwen3_coder.  The template writes the
values of earlier calls that are not strings with Jinja's ``| string`` (``True``,
``['a', 'b']``, ``None``), so a model may write them so too: a value for a field that is
not a string is read as JSON, then as a Python literal (by ``ast``, never evaluated),
then converted by the field's type.

:class:`SeedToolCallPlugin` runs the reader between ``<seed:tool_call>`` and
``</seed:tool_call>``.  These markers are added vocabulary, not special tokens, so a
server keeps them in the text (``skip_special_tokens`` does not drop them); for the same
reason a ``<seed:tool_call>`` opens a call only when ``<`` follows it (whitespace
aside) and not right after a backtick, as rule 3 asks of any tag a model may write as
prose.

Reasoning is ``<seed:think>…</seed:think>`` (:data:`SEED_THINKING`).  With a thinking
budget the model writes ``<seed:cot_budget_reflect>…</seed:cot_budget_reflect>`` inside
it, which is reasoning too: it is part of the thinking block's content.  The generation
prompt is ``<seed:bos>assistant\n``: the model opens its reasoning itself, so a reply
starts as the reply.  With ``thinking_budget=0`` the prompt
ends with ``<seed:think><seed:cot_budget_reflect>`` and the reply starts inside both:
``ParserConfig(start_in_thinking=True)`` says so.  ``<seed:eos>`` is framing wherever it
comes, and so are the newline the template writes after ``</seed:think>`` and the one
before each ``<seed:tool_call>`` (:data:`SEED_FRAMING`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..core.kit import Framing, ParsePlugin, ReaderPlugin, ThinkingFormat, register
from ._base import Dialect, value_text
from .llama import LlamaEndMarkers
from .llama.pythonic import literal_value
from .qwen3_coder.reader import Qwen3CoderReader

__all__ = [
    "CALL_END",
    "CALL_START",
    "EOS",
    "SEED_FRAMING",
    "SEED_THINKING",
    "SeedEndMarker",
    "SeedOssDialect",
    "SeedOssReader",
    "SeedToolCallPlugin",
]

CALL_START: Final = "<seed:tool_call>"
CALL_END: Final = "</seed:tool_call>"
EOS: Final = "<seed:eos>"
THINK: Final = ("<seed:think>", "</seed:think>")

SEED_THINKING: Final = ThinkingFormat((THINK,))
"""Seed-OSS's reasoning: ``<seed:think>…</seed:think>``, its budget reflections inside.

``<seed:cot_budget_reflect>`` is not a thinking tag of its own: it is written inside the
reasoning, and a reply that starts inside both (``thinking_budget=0``) shows its close
first, which must not end the reasoning."""

SEED_FRAMING: Final = Framing(after_thinking="\n", before_call="\n")
"""The template's newline after ``</seed:think>`` and before each ``<seed:tool_call>``."""

_WS: Final = " \t\r\n"


class SeedOssReader(Qwen3CoderReader):
    """Reads one ``<seed:tool_call>`` block: the qwen3_coder reader with its markers and values."""

    call_open = CALL_START

    def value_text(self, raw: str, string: bool) -> str | None:
        """A value as written between its tags -> the text its field converts.

        No framing to remove: a string is what lies between the tags (``null`` is None
        where the field admits it).  Any other value is JSON, else a Python literal as
        the template's ``| string`` writes it (``True``, ``['a', 'b']``), written as
        JSON for the field's conversion; else the text, converted or refused by the
        field's type.
        """
        text = raw.strip(_WS)
        if text == "null":
            return None
        if string:
            return raw
        try:
            json.loads(text)
        except ValueError:
            try:
                return json.dumps(literal_value(text), ensure_ascii=False)
            except (ValueError, TypeError):
                return raw
        return raw


class SeedToolCallPlugin(ReaderPlugin):
    r"""Reads Seed-OSS's ``<seed:tool_call>`` blocks (and ``\n<seed:tool_call>``).

    ``ParserConfig(dialect="seed_oss")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[SeedToolCallPlugin()])
        >>> text = "<seed:tool_call><function=read_file><parameter=path>a</parameter>"
        >>> events = parser.feed(text + "</function></seed:tool_call>") + parser.close()
        >>> events[-1].tool_instance
        ReadFile(path='a')
    """

    name = "seed_oss"
    start_tags: tuple[str, ...] = (CALL_START, "\n" + CALL_START)
    end_tag = CALL_END
    next_chars = "<"  # added vocabulary, not a special token: prose may mention it
    choose_at_first_char = True  # the reader starts at <function=, whitespace skipped

    reader = SeedOssReader


class SeedEndMarker(LlamaEndMarkers):
    """``<seed:eos>``, wherever it comes: framing, never text."""

    name = "seed_oss_end"
    start_tags: tuple[str, ...] = (EOS,)  # type: ignore[assignment]


_AMBIGUOUS: Final = re.compile(
    r"</parameter>[ \t\r\n]*(?:<parameter=|</function>)"
    r"|(?:^|\n)[ \t]*<parameter="
    r"|</function>[ \t\r\n]*(?:<function=|<seed:tool_call>|</seed:tool_call>)"
)


def _ambiguous(text: str) -> bool:
    """Would the reader take markup in ``text`` for the call's structure?

    Read with what the writer puts after it, which can complete such markup.
    """
    written = text + "</parameter>\n</function>\n" + CALL_END
    return any(m.start() < len(text) for m in _AMBIGUOUS.finditer(written))


class SeedOssDialect(Dialect):
    """``<seed:tool_call><function=NAME><parameter=P>v</parameter></function></seed:tool_call>``.

    Example:
        >>> print(SeedOssDialect().format_call("search", {"query": "a b", "max_results": 3}))
        <seed:tool_call>
        <function=search>
        <parameter=query>a b</parameter>
        <parameter=max_results>3</parameter>
        </function>
        </seed:tool_call>
    """

    name = "seed_oss"
    title = "<function=NAME> and <parameter=NAME> tags in <seed:tool_call> tags (Seed-OSS)"
    plugin_key = "seed_oss"
    parameter_tags = True
    framing = SEED_FRAMING
    thinking = SEED_THINKING

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`SeedToolCallPlugin` and the ``<seed:eos>`` framing."""
        return [SeedToolCallPlugin(), SeedEndMarker()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as this family's chat template renders it.

        Each value right between its tags: strings verbatim, other values as JSON (which
        the reader reads first; the template's own ``| string`` form reads back too).

        Raises:
            ValueError: a value holds markup the reader takes for the call's structure:
                ``</parameter>`` followed by ``<parameter=`` or ``</function>``, a line
                that starts with ``<parameter=``, or ``</function>`` followed by
                ``<function=``, ``<seed:tool_call>`` or ``</seed:tool_call>``.
        """
        lines = [CALL_START, f"<function={tool_name}>"]
        for param, value in args.items():
            text = value_text(value)
            if _ambiguous(text):
                raise ValueError(
                    f"parameter {param!r} of {tool_name!r} cannot be written in the "
                    "seed_oss format: its value holds markup the reader would take for "
                    "the call's structure"
                )
            lines.append(f"<parameter={param}>{text}</parameter>")
        lines += ["</function>", CALL_END]
        return "\n".join(lines)

    def _instructions(self) -> str:
        return "seed_oss_instructions"


register(SeedOssDialect().record())
