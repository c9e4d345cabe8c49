"""qwen3_coder: a missing ``</parameter>`` never merges values; values keep their content.

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
split at every position), through ``check`` from the dialect tests.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypeAliasType

from stream_parser import ChatDelta, ParseErrorEvent, ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import Qwen3CoderDialect
from stream_parser.testing import assert_lossless, check_dialect, merge_deltas
from tests.dialects.test_dialects import PROPS, QWEN, check, check_spans, factory
from tests.helpers import ENDINGS, assert_all_splittings, feed_all, splits
from tests.tools_fixture import TOOLS, ReadFile, Search, WriteToFile


def _call(tool: str, *params: str) -> str:
    return f"<tool_call>\n<function={tool}>\n{''.join(params)}</function>\n</tool_call>"


def _outcome(text: str, tools: Any = TOOLS, **config: Any) -> list[tuple[object, ...]]:
    """The calls and errors of ``text`` (checked for every way of cutting it)."""
    events = assert_all_splittings(factory(QWEN, tools, **config), text)
    check_spans(events, text)
    out: list[tuple[object, ...]] = []
    for e in events:
        if isinstance(e, ToolCallEvent):
            out.append(("call", e.tool_instance))
        elif isinstance(e, ParseErrorEvent):
            out.append(("error", e.error_type))
    return out


# --- a missing </parameter> -----------------------------------------------------------------


def test_missing_close_before_the_next_parameter_line() -> None:
    text = _call(
        "write_to_file",
        "<parameter=path>\nsrc/app.py\n",  # no </parameter>
        "<parameter=content>\nprint(1)\n</parameter>\n",
    )
    check(
        QWEN,
        text,
        [
            ("start", "write_to_file", 0),
            ("param", "path", "\nsrc/app.py\n"),
            ("param", "content", "\nprint(1)\n"),
            ("call", "write_to_file", WriteToFile(path="src/app.py", content="print(1)"), 0),
        ],
    )


def test_an_indented_tag_line_streams_its_indentation_which_the_value_loses() -> None:
    # The line break and indentation stream as they come, before the line shows what
    # it opens; when it opens the next parameter, the value ends without them.
    text = _call(
        "write_to_file",
        "<parameter=path>\nsrc/app.py\n",  # no </parameter>
        "    <parameter=content>\nprint(1)\n</parameter>\n",
    )
    check(
        QWEN,
        text,
        [
            ("start", "write_to_file", 0),
            ("param", "path", "\nsrc/app.py\n    "),
            ("param", "content", "\nprint(1)\n"),
            ("call", "write_to_file", WriteToFile(path="src/app.py", content="print(1)"), 0),
        ],
    )


def test_missing_close_before_function_close() -> None:
    text = _call(
        "write_to_file",
        "<parameter=path>\na.py\n</parameter>\n",
        "<parameter=content>\n    indented()\n\n",  # no </parameter>
    )
    check(
        QWEN,
        text,
        [
            ("start", "write_to_file", 0),
            ("param", "path", "\na.py\n"),
            ("param", "content", "\n    indented()\n\n"),
            ("call", "write_to_file", WriteToFile(path="a.py", content="    indented()\n"), 0),
        ],
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Every close missing, the values on lines of their own.
        (
            "<tool_call>\n<function=search>\n<parameter=query>\nq\n<parameter=max_results>\n3\n"
            "</function>\n</tool_call>",
            Search(query="q", max_results=3),
        ),
        # Inline values: a tag ends a value only at the start of a line (or of the
        # value), since code mentions the tags mid-line.
        (
            "<tool_call><function=search><parameter=query>q<parameter=max_results>3"
            "</function></tool_call>",
            Search(query="q<parameter=max_results>3"),
        ),
        (
            "<tool_call><function=search><parameter=query>q\n<parameter=max_results>3"
            "</function></tool_call>",
            Search(query="q", max_results=3),
        ),
        # The tag line indented; whitespace between </function> and </tool_call>.
        (
            "<tool_call>\n<function=search>\n  <parameter=query>\nq\n  <parameter=max_results>\n"
            "3\n  </function>  \n</tool_call>",
            Search(query="q", max_results=3),
        ),
        # A value left empty: the next tag follows at once.
        (
            "<tool_call><function=write_to_file><parameter=content><parameter=path>p"
            "</parameter></function></tool_call>",
            WriteToFile(path="p", content=""),
        ),
        # A close missing among closed ones, and one written normally after it.
        (
            "<tool_call>\n<function=search>\n<parameter=query>\nq\n</parameter>\n"
            '<parameter=tags>\n["a"]\n<parameter=max_results>\n3\n</parameter>\n'
            "</function>\n</tool_call>",
            Search(query="q", tags=["a"], max_results=3),
        ),
        # </function> in the middle of a value is content when no end follows it.
        (
            "<tool_call>\n<function=write_to_file>\n<parameter=path>\np\n</parameter>\n"
            "<parameter=content>\nf = '</function>'\n</function> x\n</function>\n</tool_call>",
            WriteToFile(path="p", content="f = '</function>'\n</function> x"),
        ),
        # A mid-line <parameter= tag is content (code that mentions it).
        (
            "<tool_call>\n<function=write_to_file>\n<parameter=content>\nx = '<parameter=path>'\n"
            "<parameter=path>\np\n</function>\n</tool_call>",
            WriteToFile(path="p", content="x = '<parameter=path>'"),
        ),
    ],
)
def test_the_call_runs_with_the_values_the_model_meant(text: str, expected: BaseModel) -> None:
    assert _outcome(text) == [("call", expected)]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # A line for a parameter that was given already (a later value cannot replace it).
        (
            _call(
                "write_to_file",
                "<parameter=path>\nok.txt\n</parameter>\n",
                "<parameter=content>\nx\n<parameter=path>\nevil\n</parameter>\n",
            ),
            "<parameter=path>\nevil",
        ),
        # ... for the very parameter whose value it is in.
        (
            _call("write_to_file", "<parameter=content>\nx\n<parameter=content>\ny\n"),
            "<parameter=content>\ny",
        ),
        # ... for a name that is not a parameter of the tool.
        (
            _call("read_file", "<parameter=path>\na\n<parameter=mode>\nfast\n</parameter>\n"),
            "<parameter=mode>",
        ),
        # </function> followed by another call, inside a value.
        (
            "<tool_call>\n<function=read_file>\n<parameter=path>\na\n</function>\n"
            "<function=read_file>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>",
            "</function>\n<function=read_file>",
        ),
        (
            "<tool_call>\n<function=read_file>\n<parameter=path>\na\n</function>\n<tool_call>\n"
            "<function=read_file>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>",
            "</function>\n<tool_call>",
        ),
    ],
)
def test_markup_that_cannot_be_meant_is_malformed(text: str, where: str) -> None:
    events = assert_all_splittings(factory(QWEN), text)
    check_spans(events, text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert error.error_type == "malformed_tool"
    assert error.call_index == 0  # the call was announced
    assert "not closed" in error.message
    assert repr(where[:20])[1:-1] in error.message  # where reading stopped
    assert merge_deltas(events)[-1].text == text  # type: ignore[union-attr]


def test_an_unregistered_tool_with_a_missing_close_is_unknown() -> None:
    text = _call("rm_rf", "<parameter=path>\n/\n<parameter=force>\ntrue\n")
    assert _outcome(text) == [("error", "unknown_tool")]


def test_recovery_respects_the_whitespace_cap() -> None:
    # More whitespace than buffer_keep_size after </function>: content, so the value
    # (and the call) stays open to the end of the stream.
    pad = " " * 5
    text = f"<tool_call><function=read_file><parameter=path>a</function>{pad}</tool_call>"
    assert _outcome(text, buffer_keep_size=4) == [("error", "unclosed_tool")]
    assert _outcome(text, buffer_keep_size=5) == [("call", ReadFile(path="a"))]
    # Indentation longer than the cap: the line is content (so path is missing and the
    # call fails validation).
    text = _call("write_to_file", f"<parameter=content>\nx\n{pad}<parameter=path>\np\n")
    assert _outcome(text, buffer_keep_size=4) == [("error", "invalid_params")]
    assert _outcome(text, buffer_keep_size=5) == [("call", WriteToFile(path="p", content="x"))]


def test_the_end_tag_needs_function_close_before_it() -> None:
    # </parameter> then </tool_call> (no </function>): not an end; the call stays open.
    text = "<tool_call><function=read_file><parameter=path>a</parameter>\n</tool_call>"
    assert _outcome(text) == [("error", "unclosed_tool")]
    text = "<tool_call><function=read_file><parameter=path>a\n</tool_call>"
    assert _outcome(text) == [("error", "unclosed_tool")]


# --- properties -----------------------------------------------------------------------------

_content = st.lists(
    st.sampled_from(
        ["a", " ", "\n", "\t", "<", ">", "/", "é", "x = 1", "<parameter=", "</tool_call>"]
    ),
    max_size=20,
).map("".join)


def _unambiguous(content: str) -> bool:
    try:
        Qwen3CoderDialect().format_call("write_to_file", {"content": content})
    except ValueError:
        return False
    return True


@PROPS
@given(
    st.text(alphabet="abc./_", min_size=1, max_size=8),
    _content,
    st.sampled_from([(True, True), (False, True), (True, False), (False, False)]),
    st.booleans(),
    st.lists(st.integers(min_value=0), max_size=4),
    st.sampled_from(ENDINGS),
)
def test_a_dropped_close_reads_as_the_written_call(
    path: str,
    content: str,
    closes: tuple[bool, bool],
    content_first: bool,
    cuts: list[int],
    end: ChatDelta | None,
) -> None:
    # A call as format_call writes it, with some </parameter> left out, reads back as
    # the same call, however it is cut and however the reply ends after it.
    assume(_unambiguous(content) and not content.endswith("\r"))
    params = [("path", path), ("content", content)]
    if content_first:
        params.reverse()
    body = "".join(
        f"<parameter={name}>\n{value}\n" + ("</parameter>\n" if close else "")
        for (name, value), close in zip(params, closes, strict=True)
    )
    text = f"<tool_call>\n<function=write_to_file>\n{body}</function>\n</tool_call>"

    def run(chunks: list[str]) -> list[Any]:
        parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=QWEN))
        events = feed_all(parser, chunks, end)
        assert_lossless(events, text)
        return merge_deltas(events)

    whole = run([text])
    calls = [e.tool_instance for e in whole if isinstance(e, ToolCallEvent)]
    assert calls == [WriteToFile(path=path, content=content)]
    assert run(splits(text, sorted({c % (len(text) + 1) for c in cuts}))) == whole
    assert run(list(text)) == whole


_fragments = st.lists(
    st.sampled_from(
        [
            "<parameter=path>",
            "<parameter=content>",
            "<parameter=mode>",
            "</parameter>",
            "</function>",
            "</tool_call>",
            "<function=write_to_file>",
            "<tool_call>",
            "\n",
            " ",
            "a",
            "<",
        ]
    ),
    max_size=16,
).map("".join)
_TAG_LINE = re.compile(r"\n[ \t]*<parameter=")


@PROPS
@given(_fragments)
def test_no_call_runs_with_a_value_that_holds_a_tag_line(body: str) -> None:
    text = f"<tool_call><function=write_to_file>{body}"
    events = feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=QWEN)), [text])
    assert_lossless(events, text)
    for event in events:
        if isinstance(event, ToolCallEvent):
            for value in event.tool_instance.model_dump().values():
                assert not _TAG_LINE.search(value), value
            assert "</function>\n</tool_call>" not in event.tool_instance.content


# --- values keep their content --------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "content"),
    [
        ("\n    indented()\n\n", "    indented()\n"),
        ("\n\n  def f():\n      pass\n  \n", "\n  def f():\n      pass\n  "),
        ("inline", "inline"),
        ("\r\nwindows\r\n\r\n", "windows\r\n"),
        ("\nends in cr\r\r\n", "ends in cr\r"),
        ("\n<![CDATA[  x  ]]>\n", "<![CDATA[  x  ]]>"),  # the format has no CDATA
        ("\n\n", ""),
        ("\n", ""),
    ],
)
def test_raw_values_lose_only_the_framing_newlines(written: str, content: str) -> None:
    for close in ("</parameter>\n", ""):
        text = _call(
            "write_to_file",
            "<parameter=path>\np\n</parameter>\n",
            f"<parameter=content>{written}{close}",
        )
        assert _outcome(text) == [("call", WriteToFile(path="p", content=content))]


class Snippet(BaseModel):
    code: Annotated[str, Field(json_schema_extra={"raw": True})]
    language: str


def test_any_raw_parameter_arrives_byte_exact() -> None:
    code = "\n\tif x:\n\t\treturn 1\n\n"
    text = _call(
        "snippet",
        f"<parameter=code>\n{code}\n</parameter>\n",
        "<parameter=language>\n  python  \n</parameter>\n",
    )
    # language is a string field: the model's string too, only the framing newlines off.
    assert _outcome(text, {"snippet": Snippet}) == [
        ("call", Snippet(code=code, language="  python  "))
    ]


# --- null -----------------------------------------------------------------------------------


class Target(BaseModel):
    host: str


MaybeText = TypeAliasType("MaybeText", str | None)


class Options(BaseModel):
    name: str
    limit: int | None = 5
    tags: list[str] | None = ["x"]
    target: Target | None = Target(host="h")
    note: str | None = "n"
    label: Annotated[str | None, Field(alias="tagLine")] = "l"
    anything: Any = "a"
    alias: MaybeText = "m"


def test_null_is_none_for_an_optional_field() -> None:
    params = "".join(
        f"<parameter={name}>\nnull\n</parameter>\n"
        for name in ("name", "limit", "tags", "target", "note", "tagLine", "anything", "alias")
    )
    text = _call("options", params)
    [(kind, instance)] = _outcome(text, {"options": Options})
    assert kind == "call"
    assert instance == Options(
        name="null",  # not optional: the text
        limit=None,
        tags=None,
        target=None,
        note=None,  # str | None: None too
        tagLine=None,
        anything="null",  # Any is not "optional": the text
        alias=None,
    )
    # Only the word itself: other text is a value.
    text = _call("options", "<parameter=name>\nx\n</parameter>\n<parameter=note>\nNULL\n")
    assert _outcome(text, {"options": Options}) == [("call", Options(name="x", note="NULL"))]


def test_none_written_by_format_call_reads_back() -> None:
    args = {"name": "x", "note": None, "limit": None, "target": None}
    text = Qwen3CoderDialect().format_call("options", args)
    assert _outcome(text, {"options": Options}) == [("call", Options.model_validate(args))]


FIXTURES = Path(__file__).parent.parent / "fixtures" / "dialects"


def test_the_recorded_replies_read_alike_under_every_chunking() -> None:
    events = check_dialect("qwen3_coder", FIXTURES / "qwen3_coder")
    assert len(events) >= 2
