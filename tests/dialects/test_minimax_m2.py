"""minimax_m2: DSML's ``invoke``/``parameter`` shape in ``<minimax:tool_call>``, read and written.

The fixture replies are rendered from MiniMax-M2's chat template
(``tests/fixtures/dialects/minimax_m2/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser import ParseErrorEvent, ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.deepseek.dsml import DsmlReader
from stream_parser.dialects.minimax_m2 import MiniMaxDialect, MiniMaxReader
from tests.dialects.family import THINK, FamilyChecks
from tests.dialects.support import FAMILY_TOOLS, read_calls
from tests.fixtures.dialects.minimax_m2 import render
from tests.helpers import ENDINGS, assert_all_splittings

MINIMAX = MiniMaxDialect()


class TestMiniMaxM2(FamilyChecks):
    dialect = "minimax_m2"
    render = render
    names = (
        ("MiniMaxAI/MiniMax-M2", ModelDialect("minimax_m2", THINK, True)),
        ("MiniMaxAI/MiniMax-M2.1", ModelDialect("minimax_m2", THINK, True)),
        ("MiniMaxAI/MiniMax-M2.5", ModelDialect("minimax_m2", THINK, True)),
        ("hf.co/unsloth/MiniMax-M2-GGUF:Q4_K_M", ModelDialect("minimax_m2", THINK, True)),
    )
    # M1 writes another form; M3 is not read until its template is.
    others = ("MiniMaxAI/MiniMax-M1-80k", "MiniMaxAI/MiniMax-M3")
    usage = ('<parameter name="path">a.py</parameter>', "<minimax:tool_call>")
    refuses_values = True  # </parameter> followed by a tag of the format


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    return read_calls("minimax_m2", text)


def test_a_call_without_its_invoke_close_runs_only_when_the_block_ends() -> None:
    body = '<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">a</parameter>\n'
    assert _calls(body + "</minimax:tool_call>") == [("read_file", {"path": "a"})]
    # At the stream's end another parameter may have been coming: the call is cut.

    def factory() -> StreamToolParser:
        return StreamToolParser(FAMILY_TOOLS, config=ParserConfig(dialect="minimax_m2"))

    for end in ENDINGS:
        events = assert_all_splittings(factory, body, end=end)
        assert "unclosed_tool" in [e.error_type for e in events if isinstance(e, ParseErrorEvent)]
        assert not any(isinstance(e, ToolCallEvent) for e in events)


@pytest.mark.parametrize("quoted", ['"read_file"', "'read_file'", "read_file"])
def test_the_name_in_any_quotes(quoted: str) -> None:
    text = (
        f"<minimax:tool_call>\n<invoke name={quoted}>\n<parameter name='path'>a</parameter>\n"
        "</invoke>\n</minimax:tool_call>"
    )
    assert _calls(text) == [("read_file", {"path": "a"})]


def test_a_string_field_keeps_json_looking_text() -> None:
    text = (
        '<minimax:tool_call>\n<invoke name="search">\n<parameter name="query">"quoted"</parameter>'
        '\n<parameter name="tags">["x"]</parameter>\n</invoke>\n</minimax:tool_call>'
    )
    assert _calls(text) == [("search", {"query": '"quoted"', "max_results": 10, "tags": ["x"]})]


def test_format_call_refuses_what_cannot_be_read_back() -> None:
    for value in ("a</parameter>\n<parameter name='x'>", "x</parameter>", "y</parameter>\n"):
        with pytest.raises(ValueError, match="cannot be written"):
            MINIMAX.format_call("write_to_file", {"content": value})
    with pytest.raises(ValueError, match="cannot be written"):
        MINIMAX.format_call('say "hi"', {})


def test_the_reader_overrides_only_the_dsml_readers_public_hooks() -> None:
    # A private method of the DSML reader may change with it; MiniMax's reader varies it
    # only where it says it may.
    shared = set(vars(MiniMaxReader)) & {n for k in DsmlReader.__mro__ for n in vars(k)}
    overridden = {n for n in shared if not n.startswith("__")}
    assert overridden == {
        "decode_value",
        "fast_path",
        "unframe_value",
        "value_end",
        "value_opened",
        "value_run",
    }
