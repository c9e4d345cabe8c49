"""Every dialect's fast path reads a reply exactly as its ``on_data`` does.

The plugin fast path (``ParsePlugin.fast_path``) takes whole chunks of a call's
arguments without the end-tag search; these tests read the same replies with it
switched off (the core's plugin reader offers none) and compare the merged events, for
values full of what each format must watch: quotes, backslashes, line breaks and
indentation, closing tags and the formats' own end markers.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import ParserConfig, StreamToolParser
from stream_parser.core._readers.plugin import PluginReader
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.dialects.granite import GraniteDialect
from stream_parser.dialects.mistral import MistralDialect
from stream_parser.dialects.phi4_mini import Phi4MiniDialect
from stream_parser.testing.fixtures import ExecuteCommand, ReadFile, WriteToFile
from tests.helpers import run

TOOLS = {"read_file": ReadFile, "write_to_file": WriteToFile, "execute_command": ExecuteCommand}

# Pieces of values: markup, the formats' markers, quotes, escapes, indentation.
PIECES = [
    "plain words ",
    "a < b and c > d ",
    "<tr><td>x</td></tr>\n",
    "\n    indented()\n",
    "\n\n  \t",
    'say "hi" ',
    "back\\slash \\\\ ",
    "</tool_call>",
    "</parameter>",
    "</function>",
    "</arg_value>",
    '<|"|>',
    "<tool_call|>",
    "<｜tool▁call▁end｜>",  # noqa: RUF001 - deepseek's marker
    "</｜DSML｜parameter>",  # noqa: RUF001 - deepseek's marker
    "<|call|>",
    "<|end|>",
    "\n<parameter=x>",
    "{[}]",
    "é😀",
]


Call = tuple[str, dict[str, Any]]

# A dialect's other layouts, as rows beside the dialects: row -> (dialect, the writer of
# the reply's calls).  Mistral's v3 arrays (a call each, or all in one), Granite's and
# Phi-4-mini's calls all in one array: the shared array reader, its elements one after the
# other.
LAYOUTS: dict[str, tuple[str, Any]] = {
    "mistral_v3": (
        "mistral",
        lambda calls: "\nThen:\n".join(MistralDialect().format_calls_v3([c]) for c in calls),
    ),
    "mistral_v3_one_array": ("mistral", MistralDialect().format_calls_v3),
    "granite_one_array": ("granite", GraniteDialect().format_calls),
    "phi4_mini_one_array": ("phi4_mini", Phi4MiniDialect().format_calls),
}
ROWS = sorted([*DIALECTS, *LAYOUTS])


def _dialect(row: str) -> str:
    return LAYOUTS[row][0] if row in LAYOUTS else row


def _write(row: str, calls: list[Call]) -> str:
    """The calls as the row writes them."""
    if row in LAYOUTS:
        return str(LAYOUTS[row][1](calls))
    fmt = get_dialect(row).format_call
    return "\nThen:\n".join(fmt(name, args) for name, args in calls)


def _reply(row: str, content: str) -> str:
    calls: list[Call] = [
        ("read_file", {"path": "src/a.py"}),
        ("write_to_file", {"path": "src/a.py", "content": content}),
        ("execute_command", {"command": 'echo "done" \\ ok'}),
    ]
    # Reasoning first: some formats' replies start inside it.
    if row == "llama":  # its calls are read only at the start of the reply
        return "<think>ok</think>" + _write(row, calls[1:2])
    return "<think>ok</think>Some prose first.\n" + _write(row, calls) + "\nDone."


def _writable(row: str) -> list[int]:
    """The pieces that the dialect can write in a value (some formats cannot hold all)."""
    ok = []
    for i, piece in enumerate(PIECES):
        try:
            _write(row, [("write_to_file", {"path": "a", "content": f"x{piece}y"})])
        except ValueError:
            continue
        ok.append(i)
    return ok


def _chunks(text: str, rnd: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        step = rnd.randint(1, 9)
        out.append(text[i : i + step])
        i += step
    return out


def _events(row: str, chunks: list[str], *, fast: bool, monkeypatch: Any) -> list[Any]:
    def factory() -> StreamToolParser:
        return StreamToolParser(TOOLS, config=ParserConfig(dialect=_dialect(row)))

    if fast:
        return run(factory, chunks)
    with monkeypatch.context() as patch:
        patch.setattr(PluginReader, "fast_path", lambda self: (None, None))
        return run(factory, chunks)


def _content(indexes: list[int]) -> str:
    return "".join(PIECES[i] for i in indexes)


@pytest.mark.parametrize("dialect", ROWS)
def test_the_fast_path_reads_as_the_slow_path(
    dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rnd = random.Random(dialect)
    pieces = _writable(dialect)
    read = 0
    while read < 6:
        try:
            text = _reply(dialect, _content([rnd.choice(pieces) for _ in range(24)]))
        except ValueError:  # pieces that this dialect cannot write side by side
            continue
        read += 1
        for _ in range(3):
            chunks = _chunks(text, rnd)
            slow = _events(dialect, chunks, fast=False, monkeypatch=monkeypatch)
            assert _events(dialect, chunks, fast=True, monkeypatch=monkeypatch) == slow
        assert _events(dialect, list(text), fast=True, monkeypatch=monkeypatch) == slow


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(ROWS),
    st.lists(st.integers(0, len(PIECES) - 1), max_size=16),
    st.randoms(use_true_random=False),
)
def test_generated_values_read_the_same_with_the_fast_path(
    dialect: str, indexes: list[int], rnd: random.Random
) -> None:
    try:
        text = _reply(dialect, _content(indexes))
    except ValueError:
        return
    chunks = _chunks(text, rnd)
    with pytest.MonkeyPatch.context() as monkeypatch:
        slow = _events(dialect, chunks, fast=False, monkeypatch=monkeypatch)
        assert _events(dialect, chunks, fast=True, monkeypatch=monkeypatch) == slow


def test_kimi_k3_values_read_the_same_with_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # K3's argument elements (format_call writes K2): values full of K3's own markers.
    from stream_parser.dialects.kimi import format_k3_call

    rnd = random.Random("kimi-k3")
    pieces = [*PIECES, "<|close|>argumen", "<|open|>argument", "<|close|>call<|sep|>", "<|"]
    read = 0
    while read < 6:
        content = "".join(rnd.choice(pieces) for _ in range(24))
        try:
            call = format_k3_call("write_to_file", {"path": "a.py", "content": content})
        except ValueError:  # a value that holds its own closing marker
            continue
        read += 1
        text = "</think>Some prose first.\n" + call + "\nDone."
        for _ in range(3):
            chunks = _chunks(text, rnd)
            slow = _events("kimi", chunks, fast=False, monkeypatch=monkeypatch)
            assert _events("kimi", chunks, fast=True, monkeypatch=monkeypatch) == slow
        assert _events("kimi", list(text), fast=True, monkeypatch=monkeypatch) == slow


# Replies no writer produces, where the slow path decides something in the middle of a
# value: a missing closing tag, an end tag right after a string or a value.
RAW = [
    (
        "qwen3_coder",
        "<tool_call>\n<function=write_to_file>\n<parameter=path>\na\n"
        "  <parameter=content>\nline one\n   more </tool_call> text\n</function>\n</tool_call>",
    ),
    (
        "qwen3_coder",
        "<tool_call>\n<function=write_to_file>\n<parameter=content>\nx\n  \n"
        "</function>\n</tool_call> after",
    ),
    (
        "glm",
        "<tool_call>write_to_file<arg_key>content</arg_key><arg_value>a </tool_call> b"
        "</arg_value>  \n </tool_call>x",
    ),
    (
        "glm",
        "<tool_call>write_to_file<arg_key>content</arg_key><arg_value>a </arg_val b "
        "</arg_valuex c <</arg_value><arg_key>path</arg_key><arg_value>p</arg_value></tool_call>",
    ),
    (
        "qwen3_coder",
        "<tool_call>\n<function=write_to_file>\n<parameter=content>\na </param b "
        "</parameterx> </functionx>\n  x\n\t\n  <tr>\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "deepseek",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="write_to_file">\n'  # noqa: RUF001
        '<｜DSML｜parameter name="content" string="true">a </｜DSML｜x> b '  # noqa: RUF001
        "</｜DSML｜parameter> c </｜DSML｜function_calls> d</｜DSML｜parameter>\n"  # noqa: RUF001
        '<｜DSML｜parameter name="path" string="true">p</｜DSML｜parameter>\n'  # noqa: RUF001
        "</｜DSML｜invoke>\n</｜DSML｜function_calls> after",  # noqa: RUF001
    ),
    (
        "gpt_oss",
        "<|start|>assistant to=functions.write_to_file<|channel|>commentary json<|message|>"
        '{"path": "p", "content": "a <|call|> b < c \\" d"}<|call|> after',
    ),
    (
        "gemma4",
        '<|tool_call>call:write_to_file{content:<|"|>a <tool_call|> b<|"|>,'
        'path:<|"|>p<|"|>}<tool_call|> after',
    ),
    (
        "hermes",
        '<tool_call>\n{"name": "write_to_file", "arguments": {"path": "a\\\\", '
        '"content": "x </tool_call> \\"y\\" \\\\"}}\n</tool_call> after',
    ),
    (
        "kimi",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_to_file:0"
        '<|tool_call_argument_begin|>{"content": "a <|tool_call_end|> b", "path": "p"}'
        "<|tool_call_end|><|tool_calls_section_end|> after",
    ),
    (
        # Keys of the object after its arguments (read without the fast path: the
        # object's scanner keeps their text), a backslash at a chunk's end, the end.
        "llama",
        '{"name": "write_to_file", "parameters": {"path": "a\\\\", "content": "x \\"y\\" '
        '{[}] \\\\ z", "a long \\"key\\"": [1, {"k": "v"}]}, "another \\\\ key": '
        '"value \\" {"}',
    ),
    (
        # Array elements: brackets and commas inside the values, an extra closing brace
        # after an element, an element that is no object, the text after the array.
        "granite",
        '<|tool_call|>[{"name": "write_to_file", "arguments": {"path": "a", "content": '
        '"x }], {\\" \\\\"}}} , {"name": "read_file", "arguments": {"path": "[b]"}}, '
        '["no", {"object": 1}], {"name": "read_file", "arguments": {"path": "c"}}] after',
    ),
    (
        # A lone call object after the marker, and v3's array with ids.
        "mistral",
        '[TOOL_CALLS] {"name": "write_to_file", "arguments": {"content": "a ] } \\\\", '
        '"path": "p"}} then [TOOL_CALLS] [{"name": "read_file", "arguments": {"path": '
        '"{,}"}, "id": "abc123def"} ,{"name": "read_file", "arguments": {"path": "q"}}] end',
    ),
]


@pytest.mark.parametrize(("dialect", "text"), RAW)
def test_decisions_inside_a_value_are_the_same(
    dialect: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if ParserConfig(dialect=dialect).starts_in_thinking:
        text = "</think>" + text  # the reply starts inside reasoning
    slow = _events(dialect, [text], fast=False, monkeypatch=monkeypatch)
    assert _events(dialect, list(text), fast=True, monkeypatch=monkeypatch) == slow
    for cut in range(1, len(text)):
        for size in (1, 2, 3):
            chunks = [text[:cut], *(text[i : i + size] for i in range(cut, len(text), size))]
            assert _events(dialect, chunks, fast=True, monkeypatch=monkeypatch) == slow, cut
