"""Rule 11: parse_tool_xml(reconstruct_tool_xml(x)) == x, through the streaming core."""

from __future__ import annotations

import datetime as dt
import enum
import gc
import time
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from stream_parser.core.config import ParserConfig
from stream_parser.core.events import ToolCallEvent
from stream_parser.core.parser import StreamToolParser
from stream_parser.core.xml_tool_parser import XMLToolParser
from stream_parser.core.xml_write import write_call
from stream_parser.dialects import get_dialect
from stream_parser.tools import tool
from tests.helpers import assert_all_splittings, feed_all


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


class Point(BaseModel):
    x: int
    label: str = ""


class WriteToFile(BaseModel):
    path: str
    content: str


class Search(BaseModel):
    query: str
    max_results: int = 10
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


class Mixed(BaseModel):
    flag: bool = False
    ratio: float = 0.0
    mode: Mode = Mode.FAST
    action: Literal["read", "write"] = "read"
    limit: int | None = 3
    points: list[Point] = Field(default_factory=list)
    scores: dict[str, int] = Field(default_factory=dict)
    pair: tuple[int, str] = (0, "")
    script: str = Field(default="", json_schema_extra={"raw": True})


class Aliased(BaseModel):
    file_path: str = Field(alias="filePath")
    body: str = Field(default="", json_schema_extra={"raw": True})


class Empty(BaseModel):
    note: str | None = None


TOOLS: dict[str, type[BaseModel]] = {
    "write_to_file": WriteToFile,
    "search": Search,
    "mixed": Mixed,
    "aliased": Aliased,
    "empty": Empty,
}

XP = XMLToolParser(TOOLS)


def round_trip(instance: BaseModel, xp: XMLToolParser = XP) -> BaseModel | None:
    xml = xp.reconstruct_tool_xml(instance)
    return xp.parse_tool_xml(
        xml, next(n for n, m in xp.tool_registry.items() if m is type(instance))
    )


@pytest.mark.parametrize(
    "instance",
    [
        WriteToFile(
            path="src/app.py", content='if a < b:\n    print("</content> is not the end")\n'
        ),
        WriteToFile(path="a", content="x</content>\n<path>evil</path>\n"),
        WriteToFile(path="a", content="x</content>\n</write_to_file>"),
        WriteToFile(path=" spaced ", content="\r\nCRLF\r\n"),
        WriteToFile(path="p", content="ends with CR\r"),
        WriteToFile(path="p", content=""),
        WriteToFile(path="p", content="\n"),
        WriteToFile(path="", content="  indented\n\n"),
        WriteToFile(path="a&amp;b", content="&lt;tag&gt; & <![CDATA[x]]> ]]>"),
        WriteToFile(path="p", content="<![CDATA[ unclosed"),
        WriteToFile(path="p", content="<![CDATA[x]]> then </content>y"),
        Search(query="q"),
        Search(query="a</query>\n<tags>[]</tags>", max_results=-3, tags=["</tags> <query>"]),
        Search(query="q", tags=["]]>", "<![CDATA[", "a\nb", ""], note="null"),
        Search(query="q", note="  "),
        Mixed(),
        Mixed(
            flag=True,
            ratio=-1.25e-7,
            mode=Mode.SAFE,
            action="write",
            limit=None,
            points=[Point(x=1, label="</points>\n<flag>"), Point(x=2)],
            scores={"</scores>": 1, "<x>": -2},
            pair=(7, "</pair> <flag>"),
            script="\n  raw\n\n",
        ),
        Mixed(ratio=float("inf")),
        Aliased(filePath="p", body="b"),
        Aliased(filePath="</filePath>\n<body>", body="</body>\n</aliased>"),
        Empty(),
        Empty(note="n"),
    ],
)
def test_round_trip_examples(instance):
    assert round_trip(instance) == instance


def test_round_trip_with_validation_off():
    xp = XMLToolParser(TOOLS, config=ParserConfig(enable_xml_validation=False))
    instance = Search(query="x", max_results=2, tags=["a"])
    assert round_trip(instance, xp) == instance


def test_round_trip_with_configured_raw_params():
    xp = XMLToolParser(TOOLS, config=ParserConfig(raw_params=frozenset({"query", "path"})))
    for instance in (
        Search(query="\n  keep my spaces  \n"),
        WriteToFile(path=" p\r", content="  stripped? no: content is scalar now  "),
    ):
        assert round_trip(instance, xp) == instance


# --- the property ---------------------------------------------------------------------------

FRAGMENTS = [
    "<",
    ">",
    "&",
    "&amp;",
    "&lt;",
    "</",
    "</content>",
    "<content>",
    "</path>",
    "<path>",
    "</query>",
    "<query>",
    "<tags>",
    "</tags>",
    "</write_to_file>",
    "</search>",
    "<![CDATA[",
    "]]>",
    "]]",
    "<!",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "x",
    "é",
    "null",
    "[",
    '"',
]

TEXT = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=16).map("".join)


def _check(instance: BaseModel) -> None:
    # Every value can be written: CDATA, with "]]>" split across sections, where needed.
    xml = XP.reconstruct_tool_xml(instance)
    name = next(n for n, m in TOOLS.items() if m is type(instance))
    assert XP.parse_tool_xml(xml, name) == instance, xml


@settings(max_examples=200, deadline=None)
@given(path=TEXT, content=TEXT)
def test_round_trip_write_to_file(path, content):
    _check(WriteToFile(path=path, content=content))


@settings(max_examples=200, deadline=None)
@given(
    query=TEXT,
    max_results=st.integers(),
    tags=st.lists(TEXT, max_size=4),
    note=st.none() | TEXT,
)
def test_round_trip_search(query, max_results, tags, note):
    _check(Search(query=query, max_results=max_results, tags=tags, note=note))


@settings(max_examples=100, deadline=None)  # a wide model: each example costs more
@given(
    flag=st.booleans(),
    ratio=st.floats(allow_nan=False),
    mode=st.sampled_from(Mode),
    action=st.sampled_from(["read", "write"]),
    limit=st.none() | st.integers(),
    points=st.lists(st.builds(Point, x=st.integers(), label=TEXT), max_size=3),
    scores=st.dictionaries(TEXT, st.integers(), max_size=3),
    pair=st.tuples(st.integers(), TEXT),
    script=TEXT,
)
def test_round_trip_mixed(flag, ratio, mode, action, limit, points, scores, pair, script):
    _check(
        Mixed(
            flag=flag,
            ratio=ratio,
            mode=mode,
            action=action,
            limit=limit,
            points=points,
            scores=scores,
            pair=pair,
            script=script,
        )
    )


def test_round_trip_with_a_config_that_starts_in_thinking():
    xp = XMLToolParser(TOOLS, config=ParserConfig(start_in_thinking=True, strict=True))
    instance = WriteToFile(path="p", content="</think> x")
    assert round_trip(instance, xp) == instance


@pytest.mark.parametrize(
    "xml",
    [
        "<search>\n<max_results>5</max_results>\n</search>",  # missing query: invalid
        "<search>\n<query>q</query>\n",  # truncated: never a call
        "<search>\n<query>q</query>\nstray</search>",  # malformed
        "<write_to_file>\n<path>p</path>\n<content>\nc\n</content>\n</write_to_file>",  # other
        "just prose mentioning <search> without a call",
        "",
    ],
)
def test_parse_tool_xml_returns_none_without_a_valid_call(xml):
    assert XP.parse_tool_xml(xml, "search") is None


def test_parse_tool_xml_reads_the_models_own_writing():
    xml = "<search>\n<query>  q  </query>\n<tags><t>a</t><t>b</t></tags>\n</search>"
    assert XP.parse_tool_xml(xml, "search") == Search(query="q", tags=["a", "b"])


def test_extract_parameters_gives_raw_values_as_the_core_splits_them() -> None:
    from pydantic import BaseModel

    from stream_parser import XMLToolParser

    class Write(BaseModel):
        path: str
        content: str

    xml_parser = XMLToolParser({"write": Write})
    xml = "<write>\n<path> a </path>\n<mode>x</mode>\n<content>\nx</content>\n</write>"
    # <mode> is not a field: an undeclared element after </path>, followed by a declared
    # parameter, confirms the close of <path> (rule 5); <mode> itself is dropped (rule 7).
    assert xml_parser.extract_parameters(xml, "write") == {"path": " a ", "content": "\nx"}
    # Text after </path> rejects that close, and then the tool's end tag makes the call
    # malformed: there is no complete call.
    stray = "<write>\n<path> a </path> please <content>\nx</content>\n</write>"
    assert xml_parser.extract_parameters(stray, "write") == {}
    good = "<write><path> a </path><content>\nx</content>y\n</content></write>"
    assert xml_parser.extract_parameters(good, "write") == {
        "path": " a ",
        "content": "\nx</content>y\n",
    }
    assert xml_parser.extract_parameters("<write><path>a", "write") == {}


# --- the one writer: every user of it reads back ----------------------------------------------


def _calls(text: str, config: ParserConfig | None = None) -> list[BaseModel]:
    parser = StreamToolParser(TOOLS, config=config)
    return [e.tool_instance for e in feed_all(parser, [text]) if isinstance(e, ToolCallEvent)]


def _calls_by_char(text: str, config: ParserConfig | None = None) -> list[BaseModel]:
    parser = StreamToolParser(TOOLS, config=config)
    events = feed_all(parser, list(text))
    return [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]


# Raw-ness unknown to the writer: these configurations read "path" and "content" each
# way, and what the writer wrote must read back under all of them.
CONFIGS = [
    ParserConfig(),
    ParserConfig(raw_params=frozenset()),
    ParserConfig(raw_params=frozenset({"path", "content"})),
]


@settings(max_examples=150, deadline=None)
@given(path=TEXT, content=TEXT)
def test_write_call_without_known_raw_params_reads_back(path, content):
    text = write_call("write_to_file", {"path": path, "content": content})
    expected = [WriteToFile(path=path, content=content)]
    for config in CONFIGS:
        assert _calls(text, config) == expected, (config, text)
    assert _calls_by_char(text) == expected, text


@settings(max_examples=150, deadline=None)
@given(path=TEXT, content=TEXT)
def test_xml_dialect_format_call_reads_back(path, content):
    text = get_dialect("xml").format_call("write_to_file", {"path": path, "content": content})
    expected = [WriteToFile(path=path, content=content)]
    assert _calls(f"x{text}y") == expected, text
    assert _calls_by_char(text) == expected, text


@settings(max_examples=100, deadline=None)
@given(example=TEXT)
def test_xml_example_reads_back(example):

    @tool
    def write_to_file(path: str, content: Annotated[Any, Field(examples=[example])]) -> None:
        """Write."""

    text = write_to_file.xml_example()
    parser = StreamToolParser({"write_to_file": write_to_file.args_model})
    calls = [e for e in feed_all(parser, [text]) if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance.content for c in calls] == [example], text  # type: ignore[attr-defined]


class Typed(BaseModel):
    mode: Mode
    day: dt.date
    point: Point
    named: Aliased


@pytest.mark.parametrize("dialect", ["xml", "qwen3_coder"])
def test_text_dialects_write_typed_values_that_read_back(dialect):
    instance = Typed(
        mode=Mode.SAFE,
        day=dt.date(2024, 1, 2),
        point=Point(x=1, label="a"),
        named=Aliased(filePath="p", body="b"),
    )
    args = {name: getattr(instance, name) for name in Typed.model_fields}
    text = get_dialect(dialect).format_call("typed", args)
    parser = StreamToolParser({"typed": Typed}, config=ParserConfig(dialect=dialect))
    calls = [e for e in feed_all(parser, [text]) if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [instance], text


@pytest.mark.parametrize(
    "instance",
    [
        WriteToFile(path=" ]]> ", content="a]]>b</content>\n</write_to_file>"),
        WriteToFile(path="<![CDATA[x]]><![CDATA[y]]>", content="<![CDATA[x]]>"),
        Search(query="</query>\n<tags>]]>", tags=["]]>"]),
    ],
)
def test_split_cdata_reads_back_however_cut(instance):
    xml = XP.reconstruct_tool_xml(instance)
    assert "]]]]><![CDATA[>" in xml
    events = assert_all_splittings(lambda: StreamToolParser(TOOLS), xml)
    assert [e.tool_instance for e in events if isinstance(e, ToolCallEvent)] == [instance]


# --- linear time ---------------------------------------------------------------------------------


def _write_time(value: str) -> float:
    instance = WriteToFile(path=value, content=value)
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        XP.reconstruct_tool_xml(instance)
        return time.perf_counter() - start
    finally:
        gc.enable()


def _growth(make, n: int, rounds: int = 3) -> float:
    """Best-of-``rounds`` time for ``make(2n)`` over ``make(n)``, measured interleaved."""
    small, big = make(n), make(2 * n)
    t_small = t_big = float("inf")
    for _ in range(rounds):
        t_small = min(t_small, _write_time(small))
        t_big = min(t_big, _write_time(big))
    return t_big / t_small


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda n: "<![CDATA[x]]>" * n,  # many sections, written verbatim
        lambda n: " " + "<![CDATA[x]]>" * n,  # many sections, wrapped (every "]]>" split)
        lambda n: "a</path>b" * n,  # many look-alike closes that do not close
        lambda n: "<![CDATA[</path><content>]]>" * n,
    ],
    ids=["sections", "wrapped-sections", "look-alike-closes", "closes-in-sections"],
)
def test_reconstruct_is_linear(make):
    # Twice the input must take about twice the time (a quadratic writer takes x4).
    # A generous limit, and a second measurement before failing: the machine is shared.
    limit = 3.0
    ratio = _growth(make, 40_000)
    if ratio >= limit:
        ratio = min(ratio, _growth(make, 40_000))
    assert ratio < limit, f"x2 input took x{ratio:.1f} the time"
