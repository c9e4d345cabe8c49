r"""The qwen3_coder dialect: ``<function=NAME>`` and ``<parameter=NAME>`` tags in ``<tool_call>``.

Written by Qwen3-Coder and Qwen3.5 and later (served by vLLM's ``qwen3_coder`` parser)::

    <tool_call>
    <function=write_to_file>
    <parameter=path>
    src/app.py
    </parameter>
    <parameter=content>
    print("hello")
    </parameter>
    </function>
    </tool_call>

:mod:`.reader` reads the calls inside ``<tool_call>`` (the shared plugin of the
``<tool_call>`` formats gives it the blocks that open with ``<``), :mod:`.bare` the calls
written without ``<tool_call>``; :class:`Qwen3CoderDialect` writes them.

When the block closes, each value loses the format's framing: exactly one newline
after ``<parameter=NAME>`` and one before ``</parameter>`` (``"\n    indented()\n\n"``
is ``"    indented()\n"``), and nothing else.  A string is the model's string: the
value of a ``str`` (or ``str | None``) field or of a raw parameter (``content``,
``diff``, ``ParserConfig.raw_params``, fields marked raw) arrives as written, CDATA
markup included (the format has none).  Other values are trimmed and converted by their
fields' types, through
:meth:`~stream_parser.core.xml_tools.XMLToolParser.build_instance`.  A value that is
``null`` (whitespace around it aside) is None for a field whose type admits None,
``str | None`` included: the format writes None so, and vLLM's and llama.cpp's parsers
read it back so.  For any other field it is the text ``null``.
A parameter the tool does not have gives ``unknown_param`` and is dropped; one given
twice (each closed) gives ``duplicate_param`` and the last value wins (rule 7).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ...core.kit import register
from .._base import value_text
from .._toolcall import ToolCallTagDialect
from .bare import BareFunctionPlugin
from .reader import _FUNCTION_CLOSE, _PARAM_CLOSE, Qwen3CoderReader

__all__ = ["BareFunctionPlugin", "Qwen3CoderDialect", "Qwen3CoderReader"]


class Qwen3CoderDialect(ToolCallTagDialect):
    """``<tool_call><function=NAME><parameter=P>...</parameter></function></tool_call>``.

    Example:
        >>> print(Qwen3CoderDialect().format_call("read_file", {"path": "a.py"}))
        <tool_call>
        <function=read_file>
        <parameter=path>
        a.py
        </parameter>
        </function>
        </tool_call>
    """

    name = "qwen3_coder"
    parameter_tags = True
    block_reader = Qwen3CoderReader
    first_chars = "<["
    # vLLM ends reasoning at <tool_call> only when <function= follows.
    reasoning_guard = "<"
    title = "<function=NAME> and <parameter=NAME> tags in <tool_call> tags (Qwen3-Coder)"

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call with each value on lines of its own, as Qwen3-Coder does.

        Strings are verbatim; other values are JSON (None is ``null``).  The reader
        removes the two framing newlines again: raw values (``content``, ``diff``...)
        read back byte-exact, scalars stripped.

        Raises:
            ValueError: a value holds text the reader takes for the call's structure:
                ``</parameter>`` followed by ``<parameter=`` or ``</function>``, a line
                that starts with ``<parameter=``, or ``</function>`` followed by
                ``</tool_call>``, ``<function=`` or ``<tool_call>``.
        """
        lines = ["<tool_call>", f"<function={tool_name}>"]
        for param, value in args.items():
            text = value_text(value)
            if _ambiguous(text):
                raise ValueError(
                    f"parameter {param!r} of {tool_name!r} cannot be written in the "
                    "qwen3_coder format: its value holds markup the reader would take "
                    "for the call's structure (</parameter> followed by <parameter= or "
                    "</function>, a line starting with <parameter=, or </function> "
                    "followed by </tool_call>, <function= or <tool_call>)"
                )
            lines.append(f"<parameter={param}>\n{text}\n{_PARAM_CLOSE}")
        lines += [_FUNCTION_CLOSE, "</tool_call>"]
        return "\n".join(lines)

    def _instructions(self) -> str:
        return "qwen3_coder_instructions"


_AMBIGUOUS: Final = re.compile(
    r"</parameter>[ \t\r\n]*(?:<parameter=|</function>)"
    r"|(?:^|\n)[ \t]*<parameter="
    r"|</function>[ \t\r\n]*(?:<function=|<tool_call>|</tool_call>)"
)


def _ambiguous(text: str) -> bool:
    """Would the reader take markup inside ``text`` for the structure of the call?"""
    return _AMBIGUOUS.search(text) is not None


Qwen3CoderDialect.companion = BareFunctionPlugin
register(Qwen3CoderDialect().record())
