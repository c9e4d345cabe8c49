"""XMLToolParser without the streaming core: registry, value rules, errors, reconstruction."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import VERSION as PYDANTIC_VERSION
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypedDict

from stream_parser.core.config import ParserConfig
from stream_parser.core.xml_tool_parser import XMLToolParser
from stream_parser.core.xml_tools import ToolBuildResult
from stream_parser.errors import ConfigError, StreamParserError, ToolError


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    x: int
    y: int = 0


@dataclasses.dataclass
class Span:
    start: int
    end: int


class Meta(TypedDict):
    author: str
    year: int


class WriteToFile(BaseModel):
    path: str
    content: str


class ReplaceInFile(BaseModel):
    path: str
    diff: str


class Search(BaseModel):
    query: str
    max_results: int = 10
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


class Everything(BaseModel):
    text: str = ""
    flag: bool = False
    count: int = 0
    ratio: float = 0.0
    mode: Mode = Mode.FAST
    priority: Priority = Priority.LOW
    action: Literal["read", "write"] = "read"
    limit: int | None = None
    items: list[int] = Field(default_factory=list)
    pair: tuple[int, str] = (0, "")
    unique: set[str] = Field(default_factory=set)
    scores: dict[str, float] = Field(default_factory=dict)
    origin: Point = Point(x=0)
    points: list[Point] = Field(default_factory=list)
    span: Span | None = None
    meta: Meta | None = None


class Aliased(BaseModel):
    file_path: str = Field(alias="filePath")
    body: str = Field(default="", json_schema_extra={"raw": True})
    bad_alias: int = Field(default=0, alias="not a tag")


class Marked(BaseModel):
    script: str = Field(json_schema_extra={"raw": True})
    title: str = ""


class Validated(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def no_spaces(cls, value: str) -> str:
        if " " in value:
            raise ValueError("must not contain spaces")
        return value


class Buggy(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def crash(cls, value: str) -> str:
        raise KeyError(value)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class Defaults(BaseModel):
    keep: int | None = 5
    drop: int | None = None
    label: str | None = None


TOOLS: dict[str, type[BaseModel]] = {
    "write_to_file": WriteToFile,
    "replace_in_file": ReplaceInFile,
    "search": Search,
    "everything": Everything,
    "aliased": Aliased,
    "marked": Marked,
    "validated": Validated,
    "buggy": Buggy,
    "strict": Strict,
    "defaults": Defaults,
}


@pytest.fixture
def xp() -> XMLToolParser:
    return XMLToolParser(TOOLS)


def build(xp: XMLToolParser, tool: str, **params: str) -> Any:
    result = xp.build_instance(tool, params)
    assert result.ok, result.message
    assert result.message == ""
    assert result.errors == ()
    return result.instance


# --- registry -----------------------------------------------------------------------------


# The tool-name rule of schema/names.py: 1-128 letters, digits, "_", "-", "." or "/".
@pytest.mark.parametrize("name", ["", "a b", "tool>", "<tool", "t\n", "a:b", "x" * 129])
def test_invalid_tool_names(name):
    with pytest.raises(ConfigError, match="invalid tool name"):
        XMLToolParser({name: Search})


def test_valid_tool_names():
    XMLToolParser({"_x": Search, "a_b-c_1": Search, "X": Search})


def test_non_string_tool_name():
    with pytest.raises(ConfigError):
        XMLToolParser({1: Search})  # type: ignore[dict-item]


@pytest.mark.parametrize("model", [dict, Search(query="q"), "Search", None, Span])
def test_registry_values_must_be_model_classes(model):
    with pytest.raises(ConfigError, match="not a Pydantic BaseModel subclass"):
        XMLToolParser({"tool": model})


def test_registry_must_be_a_mapping():
    with pytest.raises(ConfigError):
        XMLToolParser([("search", Search)])  # type: ignore[arg-type]


def test_config_must_be_a_parser_config():
    with pytest.raises(ConfigError):
        XMLToolParser(TOOLS, config={"raw_params": ["x"]})  # type: ignore[arg-type]


def test_alias_colliding_with_another_field():
    class Clash(BaseModel):
        a: int = Field(alias="b")
        b: int

    with pytest.raises(ConfigError, match="'b'"):
        XMLToolParser({"clash": Clash})


def test_config_errors_are_value_errors_and_library_errors():
    with pytest.raises(ValueError):
        XMLToolParser({"bad name": Search})
    with pytest.raises(StreamParserError):
        XMLToolParser({"bad name": Search})


def test_registry_is_a_read_only_copy():
    tools: dict[str, type[BaseModel]] = {"search": Search}
    xp = XMLToolParser(tools)
    tools["other"] = WriteToFile
    assert list(xp.tool_registry) == ["search"]
    with pytest.raises(TypeError):
        xp.tool_registry["x"] = Search  # type: ignore[index]


# --- param_names / is_raw_param ---------------------------------------------------------


def test_param_names(xp):
    assert xp.param_names("search") == {"query", "max_results", "tags", "note"}
    assert xp.param_names("write_to_file") == {"path", "content"}


def test_param_names_include_valid_aliases(xp):
    # 'not a tag' cannot be written as a tag, so only the field name is accepted.
    assert xp.param_names("aliased") == {"file_path", "filePath", "body", "bad_alias"}


def test_param_names_include_alias_choices():
    class Choices(BaseModel):
        path: str = Field(validation_alias=AliasChoices("file", "filename"))

    assert XMLToolParser({"c": Choices}).param_names("c") == {"path", "file", "filename"}


def test_unknown_tool_is_a_tool_error(xp):
    with pytest.raises(ToolError, match="unknown tool 'nope'"):
        xp.param_names("nope")
    with pytest.raises(ToolError):
        xp.build_instance("nope", {})
    with pytest.raises(ToolError):
        xp.is_raw_param("nope", "x")


def test_is_raw_param_defaults(xp):
    assert xp.is_raw_param("write_to_file", "content")
    assert xp.is_raw_param("replace_in_file", "diff")
    assert not xp.is_raw_param("write_to_file", "path")
    assert not xp.is_raw_param("search", "query")


def test_is_raw_param_marked_on_the_field(xp):
    assert xp.is_raw_param("marked", "script")
    assert not xp.is_raw_param("marked", "title")
    assert xp.is_raw_param("aliased", "body")


def test_is_raw_param_from_config():
    xp = XMLToolParser(TOOLS, config=ParserConfig(raw_params=frozenset({"query", "file_path"})))
    assert xp.is_raw_param("search", "query")
    assert not xp.is_raw_param("write_to_file", "content")  # the default set was replaced
    # A field listed by name is raw under its alias too.
    assert xp.is_raw_param("aliased", "filePath")
    # Unknown parameters: only the config decides.
    assert xp.is_raw_param("search", "query")
    assert not xp.is_raw_param("search", "unknown")


# --- build_instance: types --------------------------------------------------------------


def test_build_every_type(xp):
    instance = build(
        xp,
        "everything",
        text="  hello  ",
        flag=" yes ",
        count="42",
        ratio="0.5",
        mode="SAFE",
        priority="2",
        action="write",
        limit="null",
        items="<item>1</item><item>2</item>",
        pair='[3, "c"]',
        unique='["a", "a", "b"]',
        scores="<a>1.5</a><b>2</b>",
        origin='{"x": "1", "y": 2}',
        points="<p><x>1</x></p><p><x>2</x><y>3</y></p>",
        span="<start>1</start><end>9</end>",
        meta='{"author": "me", "year": "2024"}',
    )
    assert instance == Everything(
        text="hello",
        flag=True,
        count=42,
        ratio=0.5,
        mode=Mode.SAFE,
        priority=Priority.HIGH,
        action="write",
        limit=None,
        items=[1, 2],
        pair=(3, "c"),
        unique={"a", "b"},
        scores={"a": 1.5, "b": 2.0},
        origin=Point(x=1, y=2),
        points=[Point(x=1), Point(x=2, y=3)],
        span=Span(1, 9),
        meta={"author": "me", "year": 2024},
    )


def test_build_optional_value_and_defaults(xp):
    assert build(xp, "everything", limit=" 7 ").limit == 7
    assert build(xp, "everything") == Everything()
    assert build(xp, "search", query="q", note="null").note == "null"  # str keeps its text


def test_build_by_field_name_or_alias(xp):
    assert build(xp, "aliased", filePath="a").file_path == "a"
    assert build(xp, "aliased", file_path="b").file_path == "b"


@pytest.mark.skipif(
    tuple(int(part) for part in PYDANTIC_VERSION.split(".")[:2]) < (2, 11),
    reason="validate_by_alias / validate_by_name arrived in pydantic 2.11",
)
def test_build_by_name_when_the_model_does_not_validate_by_alias():
    class ByName(BaseModel):
        model_config = ConfigDict(validate_by_alias=False, validate_by_name=True)
        path: str = Field(alias="filePath")

    xp = XMLToolParser({"t": ByName})
    assert xp.build_instance("t", {"filePath": "x"}).instance == ByName.model_validate(
        {"path": "x"}
    )
    assert xp.build_instance("t", {"path": "y"}).ok


# --- build_instance: whitespace and CDATA (rule 6) ----------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a.py", "a.py"),
        ("  a.py\n", "a.py"),
        ("\n\t a b \r\n", "a b"),
        ("", ""),
        (" <![CDATA[ padded ]]> ", " padded "),
        ("<![CDATA[]]>", ""),
        ("<![CDATA[a]]> <![CDATA[b]]>", "<![CDATA[a]]> <![CDATA[b]]>"),  # two sections
        ("x <![CDATA[a]]>", "x <![CDATA[a]]>"),  # not only a section
        ("<![CDATA[a]]>b]]>", "<![CDATA[a]]>b]]>"),
        ("&amp; &lt;", "&amp; &lt;"),  # no entity decoding
    ],
)
def test_scalar_values_are_stripped(xp, raw, expected):
    assert build(xp, "write_to_file", path=raw, content="").path == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\nbody\n", "body"),
        ("\r\nbody\r\n", "body"),
        ("\n\nbody\n\n", "\nbody\n"),  # exactly one newline each side
        ("  body  ", "  body  "),  # spaces are kept
        ("\n  indented\n\tcode\n", "  indented\n\tcode"),
        ("body", "body"),
        ("\n", ""),
        ("\r\n", ""),
        ("\n\n", ""),
        ("\r\n\r\n\r\n", "\r\n"),
        ("\n<![CDATA[\n keep \n]]>\n", "\n keep \n"),
        ("\n  <![CDATA[x]]>  \n", "x"),
        ("\n</content> inside\n", "</content> inside"),
    ],
)
def test_raw_values_lose_one_newline_each_side(xp, raw, expected):
    assert build(xp, "write_to_file", path="p", content=raw).content == expected
    assert build(xp, "replace_in_file", path="p", diff=raw).diff == expected
    assert build(xp, "marked", script=raw).script == expected


def test_cdata_is_unwrapped_before_conversion(xp):
    assert build(xp, "everything", count="<![CDATA[ 5 ]]>").count == 5
    assert build(xp, "everything", items="<![CDATA[<i>1</i><i>2</i>]]>").items == [1, 2]


# --- build_instance: errors -------------------------------------------------------------


def test_invalid_value_gives_errors_and_a_readable_message(xp):
    result = xp.build_instance("search", {"query": "q", "max_results": "lots"})
    assert isinstance(result, ToolBuildResult)
    assert result.instance is None
    assert not result.ok
    assert len(result.errors) == 1
    error = result.errors[0]
    assert error["type"] == "int_parsing"
    assert error["loc"] == ["max_results"]
    assert error["input"] == "lots"
    assert "url" not in error
    assert "search" in result.message
    assert "max_results" in result.message
    assert "valid integer" in result.message
    assert '"lots"' in result.message
    json.dumps(result.errors)  # JSON-safe


def test_missing_and_multiple_errors(xp):
    result = xp.build_instance("everything", {"count": "x", "mode": "turbo", "flag": "maybe"})
    assert {tuple(e["loc"]) for e in result.errors} == {("count",), ("mode",), ("flag",)}
    assert "3 errors" in result.message
    for name in ("count", "mode", "flag"):
        assert f"- {name}:" in result.message
    missing = xp.build_instance("write_to_file", {"path": "p"})
    assert missing.errors[0]["type"] == "missing"
    assert "- content: Field required" in missing.message


def test_nested_error_locations(xp):
    result = xp.build_instance("everything", {"points": "<p><x>1</x></p><p><x>no</x></p>"})
    assert result.errors[0]["loc"] == ["points", 1, "x"]
    assert "- points[1].x:" in result.message


def test_validator_errors_are_reported(xp):
    result = xp.build_instance("validated", {"name": "a b"})
    assert result.instance is None
    assert "must not contain spaces" in result.message


def test_a_crashing_validator_does_not_raise(xp):
    result = xp.build_instance("buggy", {"name": "x"})
    assert result.instance is None
    assert result.errors[0]["type"] == "exception"
    assert "KeyError" in result.message
    json.dumps(result.errors)


def test_long_inputs_are_shortened_in_the_message(xp):
    result = xp.build_instance("everything", {"count": "9" * 50 + "x" * 500})
    assert len(result.message) < 400
    assert "…" in result.message
    assert len(result.errors[0]["input"]) == 550  # the details keep everything


def test_unknown_params_follow_the_models_extra_policy(xp):
    assert xp.build_instance("search", {"query": "q", "other": "1"}).ok
    result = xp.build_instance("strict", {"a": "1", "other": " 1 "})
    assert result.errors[0]["type"] == "extra_forbidden"
    assert result.errors[0]["input"] == "1"


def test_validation_off_uses_model_construct():
    xp = XMLToolParser(TOOLS, config=ParserConfig(enable_xml_validation=False))
    instance = xp.build_instance("search", {"query": " q ", "max_results": "3"}).instance
    assert isinstance(instance, Search)
    assert (instance.query, instance.max_results, instance.tags) == ("q", 3, [])
    unchecked = xp.build_instance("search", {"query": "q", "max_results": "lots"}).instance
    assert isinstance(unchecked, Search)
    assert unchecked.max_results == "lots"  # type: ignore[comparison-overlap]  # not validated
    aliased = xp.build_instance("aliased", {"filePath": "p"}).instance
    assert isinstance(aliased, Aliased)
    assert aliased.file_path == "p"


def test_result_is_frozen(xp):
    result = xp.build_instance("search", {"query": "q"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.message = "x"


# --- reconstruct_tool_xml ---------------------------------------------------------------


def test_reconstruct_layout(xp):
    xml = xp.reconstruct_tool_xml(WriteToFile(path="src/app.py", content="print(1)\n"))
    assert xml == (
        "<write_to_file>\n<path>src/app.py</path>\n<content>\nprint(1)\n\n</content>\n"
        "</write_to_file>"
    )


def test_reconstruct_scalars_and_json(xp):
    xml = xp.reconstruct_tool_xml(
        Everything(
            flag=True,
            count=3,
            ratio=0.1,
            mode=Mode.SAFE,
            priority=Priority.HIGH,
            items=[1, 2],
            origin=Point(x=1),
            span=Span(1, 2),
        )
    )
    lines = xml.split("\n")
    assert lines[0] == "<everything>"
    assert lines[-1] == "</everything>"
    assert "<text></text>" in lines
    assert "<flag>true</flag>" in lines
    assert "<count>3</count>" in lines
    assert "<ratio>0.1</ratio>" in lines
    assert "<mode>safe</mode>" in lines
    assert "<priority>2</priority>" in lines
    assert "<items>[1,2]</items>" in lines
    assert '<origin>{"x":1,"y":0}</origin>' in lines
    assert '<span>{"start":1,"end":2}</span>' in lines
    assert not any(line.startswith(("<limit>", "<meta>")) for line in lines)  # None omitted


def test_reconstruct_values_are_verbatim(xp):
    xml = xp.reconstruct_tool_xml(WriteToFile(path="a&b<c>.py", content="x &amp; y < z"))
    assert "<path>a&b<c>.py</path>" in xml
    assert "<content>\nx &amp; y < z\n</content>" in xml


def test_reconstruct_omits_none_only_when_the_default_is_none(xp):
    xml = xp.reconstruct_tool_xml(Defaults(keep=None, drop=None, label=None))
    assert xml == "<defaults>\n<keep>null</keep>\n</defaults>"
    assert xp.reconstruct_tool_xml(Defaults(drop=1)) == (
        "<defaults>\n<keep>5</keep>\n<drop>1</drop>\n</defaults>"
    )


def test_reconstruct_writes_aliases_and_raw_marked_fields(xp):
    xml = xp.reconstruct_tool_xml(Aliased(filePath="p", body="b"))
    assert xml == (
        "<aliased>\n<filePath>p</filePath>\n<body>\nb\n</body>\n<bad_alias>0</bad_alias>\n"
        "</aliased>"
    )


@pytest.mark.parametrize(
    ("path", "written"),
    [
        (" lead", "<![CDATA[ lead]]>"),
        ("trail\n", "<![CDATA[trail\n]]>"),
        ("a</path>\n<content>b", "<![CDATA[a</path>\n<content>b]]>"),
        ("a</path></write_to_file>", "<![CDATA[a</path></write_to_file>]]>"),
        ("a</path>", "<![CDATA[a</path>]]>"),  # at the end: conservatively wrapped
        ("a <![CDATA[ b", "<![CDATA[a <![CDATA[ b]]>"),  # unclosed section
        # Not ambiguous: written as is.
        ("a</path>b", "a</path>b"),
        ("a</path> <other>", "a</path> <other>"),
        ("a</content>\n<path>", "a</content>\n<path>"),  # only </path> can close path
        ("x <![CDATA[</path><content>]]> y", "x <![CDATA[</path><content>]]> y"),
        ("a]]>b", "a]]>b"),
    ],
)
def test_reconstruct_wraps_only_ambiguous_values(xp, path, written):
    xml = xp.reconstruct_tool_xml(WriteToFile(path=path, content=""))
    # A value with a line break is written on lines of its own.
    body = f"\n{written}\n" if "\n" in written else written
    assert xml.rsplit("\n<content>", 1)[0] == f"<write_to_file>\n<path>{body}</path>"


@pytest.mark.parametrize(
    ("content", "wrapped"),
    [
        ("  spaces are fine  ", False),
        ("\n\nnewlines are fine\n\n", False),
        ("ends with CR\r", True),
        ("x</content>\n<path>y</path>", True),
        ("x</content></write_to_file>", True),
        ("x</content>y", False),
        ("<![CDATA[ open", True),
    ],
)
def test_reconstruct_raw_values(xp, content, wrapped):
    xml = xp.reconstruct_tool_xml(WriteToFile(path="p", content=content))
    body = f"<![CDATA[{content}]]>" if wrapped else content
    assert xml.endswith(f"<content>\n{body}\n</content>\n</write_to_file>")


def test_reconstruct_json_values_escape_instead_of_cdata(xp):
    xml = xp.reconstruct_tool_xml(Search(query="q", tags=["</tags> <query>", "]]>"]))
    assert '<tags>["\\u003c/tags> \\u003cquery>","]]>"]</tags>' in xml


@pytest.mark.parametrize(
    "path", [" ]]> ", "<![CDATA[x]]>", "a</path>\n<content>]]>", "x\n<![CDATA[y]]>\n"]
)
def test_reconstruct_splits_cdata_end_across_sections(xp, path):
    instance = WriteToFile(path=path, content="")
    xml = xp.reconstruct_tool_xml(instance)
    assert "]]]]><![CDATA[>" in xml
    assert xp.parse_tool_xml(xml, "write_to_file") == instance


def test_reconstruct_tool_name_resolution():
    xp = XMLToolParser({"a": Search, "b": Search, "w": WriteToFile})
    instance = Search(query="q")
    with pytest.raises(ToolError, match="several tools"):
        xp.reconstruct_tool_xml(instance)
    assert xp.reconstruct_tool_xml(instance, "b").startswith("<b>\n<query>q</query>")
    assert xp.reconstruct_tool_xml(WriteToFile(path="p", content="c")).startswith("<w>")
    with pytest.raises(ToolError, match="takes WriteToFile"):
        xp.reconstruct_tool_xml(instance, "w")
    with pytest.raises(ToolError, match="no tool"):
        xp.reconstruct_tool_xml(Point(x=1))
    with pytest.raises(ToolError, match="unknown tool"):
        xp.reconstruct_tool_xml(instance, "zzz")


def test_reconstruct_of_a_constructed_instance_skips_missing_fields(xp):
    partial = WriteToFile.model_construct(path="p")
    assert xp.reconstruct_tool_xml(partial) == "<write_to_file>\n<path>p</path>\n</write_to_file>"


def test_reconstructed_params_build_back(xp):
    """Without the core: cut each written parameter out by hand and rebuild."""
    original = Everything(
        text="  a ",
        flag=True,
        count=-2,
        ratio=2.5,
        mode=Mode.SAFE,
        action="write",
        limit=4,
        items=[1],
        pair=(1, "x"),
        unique={"u"},
        scores={"k": 1.0},
        origin=Point(x=3),
        points=[Point(x=1, y=2)],
        span=Span(0, 1),
        meta={"author": "a", "year": 1},
    )
    xml = xp.reconstruct_tool_xml(original)
    params = {}
    for line in xml.split("\n")[1:-1]:
        name = line[1 : line.index(">")]
        params[name] = line[len(name) + 2 : -len(name) - 3]
    assert xp.build_instance("everything", params).instance == original


# --- never raises -------------------------------------------------------------------------

RAW = st.lists(
    st.sampled_from(
        [
            "<",
            ">",
            "</p>",
            "<item>",
            "</item>",
            "<x>1</x>",
            "[",
            "]",
            "{",
            "}",
            '"',
            ",",
            "1",
            "null",
            "true",
            "&amp;",
            "<![CDATA[",
            "]]>",
            "<!DOCTYPE",
            "\n",
            "\r\n",
            " ",
            "é",
        ]
    )
    | st.text(max_size=3),
    max_size=12,
).map("".join)


@settings(max_examples=100, deadline=None)
@given(params=st.dictionaries(st.sampled_from(sorted(Everything.model_fields)), RAW))
def test_build_instance_never_raises(params):
    result = XMLToolParser(TOOLS).build_instance("everything", params)
    assert (result.instance is None) == bool(result.errors)
    assert (result.instance is None) == bool(result.message)
    json.dumps(result.errors)
