"""check_dialect: a dialect's fixture cases, read under every chunking a stream can have.

Theory of operation.  A dialect is right when a reply reads the same however the stream
cuts it, and when the events it gives tile the reply.  :func:`check_dialect` reads each
case of a ``cases.json`` (the form of ``tests/fixtures/dialects/``) with a fresh parser
of the dialect:

* whole, in one chunk (the reference);
* one character at a time;
* split in two at every position;
* as a tokenizer streams it: each of the dialect's markers (its plugins' tags, its
  thinking tags, the ``markers`` of its record, and any ``markers`` given) as one token,
  the text between them in runs of three characters;
* in the case's own ``chunks``, when it gives them.

Every run must be lossless (the tiling spans cover the text exactly; a call's ``raw``
and a delta's text are what their spans cover), and its merged events must equal the
reference.  Then the reference must make the case's calls, errors, text, thinking,
framing and notices.  A case that reads differently under one chunking fails with that
chunking and the first event that differs.

A case is a mapping:

``name``, ``text``
    what to read (or ``file``: a file beside the ``cases.json`` that holds the text);
``calls``
    the calls it makes, in order: ``[name, arguments]`` or ``{"name", "arguments"}``;
    each is compared as the tool's model validates the arguments;
``errors``, ``text_out``, ``thinking`` (optional)
    the error types reported, all text output joined, the thinking blocks' contents (a
    string for one block);
``framing``, ``notices`` (optional)
    the framing events' texts and the notices' codes, in order;
``config`` (optional)
    ``ParserConfig`` options for this case;
``cut`` (optional)
    the stream ends cut (``finish_reason == "length"``);
``chunks`` (optional)
    one more chunking to read.

Example:
    >>> cases = [{
    ...     "name": "one_call",
    ...     "text": '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>',
    ...     "calls": [["read_file", {"path": "a"}]],
    ... }]
    >>> events = check_dialect("hermes", cases)
    >>> [e.kind for e in events["one_call"]]
    ['tool_call_start', 'tool_arguments_delta', 'tool_call']
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.events import (
    FramingEvent,
    NoticeEvent,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ThinkingEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from ..core.kit import dialect_plugins, dialect_record
from ..core.parser import StreamToolParser
from .events import assert_lossless, merge_deltas
from .fixtures import TOOLS

__all__ = ["check_chunkings", "check_dialect", "dialect_markers", "load_cases", "marker_tokens"]


def load_cases(source: str | Path) -> list[dict[str, Any]]:
    """The cases of a ``cases.json`` file (or of the one in a folder).

    The file holds a list of cases, or an object with a ``cases`` list.  A case with a
    ``file`` (a path beside the ``cases.json``) reads its text from that file.
    """
    path = Path(source)
    if path.is_dir():
        path = path / "cases.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    cases = [dict(case) for case in (data["cases"] if isinstance(data, dict) else data)]
    for case in cases:
        if "file" in case:
            case["text"] = (path.parent / case["file"]).read_text(encoding="utf-8")
    return cases


def marker_tokens(text: str, markers: Iterable[str]) -> list[str]:
    """``text`` cut as a tokenizer streams it: each marker one token, the rest in threes.

    Example:
        >>> marker_tokens("ab cd<m>efgh", ["<m>"])
        ['ab ', 'cd', '<m>', 'efg', 'h']
    """
    ordered = sorted({m for m in markers if m}, key=len, reverse=True)
    out: list[str] = []
    pos = 0

    def rest(piece: str) -> None:
        out.extend(piece[i : i + 3] for i in range(0, len(piece), 3))

    if ordered:
        for match in re.finditer("|".join(map(re.escape, ordered)), text):
            rest(text[pos : match.start()])
            out.append(match.group())
            pos = match.end()
    rest(text[pos:])
    return out


def dialect_markers(config: ParserConfig) -> set[str]:
    """The markers a configuration's dialects stream as one token each.

    They are the dialects' plugins' start and end tags (and trailing tags), the
    configuration's thinking tags, and the ``markers`` each dialect's record lists,
    stripped of surrounding whitespace.  :func:`check_dialect` streams each as one token
    (:func:`marker_tokens`); give them to :func:`check_chunkings` to do the same.

    Args:
        config: the parser configuration whose dialects to read.

    Returns:
        The markers, as a set.

    Example:
        >>> sorted(dialect_markers(ParserConfig(dialect="hermes")))
        ['</think>', '</thinking>', '</tool_call>', '<think>', '<thinking>', '<tool_call>']
    """
    found: set[str] = set()
    for name in config.dialects:
        found.update(dialect_record(name).markers)
    for plugin in dialect_plugins(config.dialects):
        found.update(plugin.start_tags)
        found.add(plugin.end_tag)
        found.update(getattr(plugin, "trailing", ()))
    for start, end in config.thinking_pairs:
        found.update((start, end))
    return {marker.strip() or marker for marker in found if marker}


def _check_spans(events: Sequence[ParseEvent], text: str, how: str) -> None:
    """A call's ``raw`` and a delta's text are what their spans cover."""
    for event in events:
        raw = text[event.span[0] : event.span[1]]
        if isinstance(event, (ToolArgumentsDeltaEvent, ToolParamDeltaEvent)):
            assert raw == event.delta, f"{how}: a delta's span covers {raw!r}: {event!r}"
        elif isinstance(event, ToolCallEvent):
            assert raw == event.raw, f"{how}: a call's span covers {raw!r}: {event!r}"
        elif isinstance(event, ToolCallStartEvent):
            assert raw, f"{how}: a call start with an empty span: {event!r}"


def _read(
    make: Callable[[], StreamToolParser], chunks: list[str], cut: bool, how: str
) -> list[ParseEvent]:
    parser = make()
    events: list[ParseEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    if cut:
        events.extend(parser.feed_delta(ChatDelta(finish_reason="length")))
    events.extend(parser.close())
    text = "".join(chunks)
    try:
        assert_lossless(events, text)
    except AssertionError as error:
        raise AssertionError(f"{how}: the events do not tile the text: {error}") from None
    _check_spans(events, text, how)
    return merge_deltas(events)


def _first_difference(got: list[ParseEvent], want: list[ParseEvent]) -> str:
    for index, (mine, reference) in enumerate(zip(got, want, strict=False)):
        if mine != reference:
            return f"event {index}: {mine!r}, whole text gave {reference!r}"
    if len(got) > len(want):
        return f"event {len(want)}: {got[len(want)]!r}, which the whole text does not give"
    return f"event {len(got)}: missing; whole text gave {want[len(got)]!r}"


def _chunkings(
    text: str, markers: Iterable[str], more: Iterable[tuple[str, list[str]]]
) -> Iterable[tuple[str, list[str]]]:
    yield "one character at a time", list(text)
    yield "each marker as one token", marker_tokens(text, markers)
    yield from more
    for cut in range(1, len(text)):
        yield f"split at {cut}", [text[:cut], text[cut:]]
    if len(text) < 40:  # a short text: cut in three at every pair of positions too
        for a in range(1, len(text)):
            for b in range(a + 1, len(text)):
                yield f"split at {a} and {b}", [text[:a], text[a:b], text[b:]]


def check_chunkings(
    make: Callable[[], StreamToolParser],
    text: str,
    *,
    markers: Iterable[str] = (),
    more: Iterable[tuple[str, list[str]]] = (),
    cut: bool = False,
    label: str = "the text",
) -> list[ParseEvent]:
    """Read ``text`` with fresh parsers under every chunking; the merged events, checked.

    The chunkings are those of :func:`check_dialect` (``markers`` as one token each),
    and ``more``: ``(how, chunks)`` pairs.

    Raises:
        AssertionError: a chunking reads differently (named, with the first event that
            differs), or a run's events do not tile the text.
    """
    reference = _read(make, [text], cut, f"{label}, whole")
    for how, chunks in _chunkings(text, markers, more):
        got = _read(make, chunks, cut, f"{label}, {how}")
        if got != reference:
            raise AssertionError(
                f"{label} reads differently {how}: {_first_difference(got, reference)}"
            )
    return reference


def _expected_calls(
    case: Mapping[str, Any], tools: Mapping[str, type[BaseModel]]
) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for call in case.get("calls", []):
        tool, arguments = (call["name"], call["arguments"]) if isinstance(call, dict) else call
        out.append((tool, tools[tool].model_validate(arguments).model_dump(by_alias=True)))
    return out


def check_dialect(
    name: str | tuple[str, ...],
    cases: str | Path | Sequence[Mapping[str, Any]],
    *,
    tools: Mapping[str, type[BaseModel]] | None = None,
    config: Mapping[str, Any] | None = None,
    markers: Iterable[str] = (),
) -> dict[str, list[ParseEvent]]:
    """Read each case in the dialect under every chunking, and check what it makes.

    Args:
        name: the dialect (``ParserConfig(dialect=name)``), or several read together.
        cases: the cases (see the module), or the path of a ``cases.json`` or its folder.
        tools: the tools the cases call (default:
            :data:`stream_parser.testing.fixtures.TOOLS`).
        config: ``ParserConfig`` options for the cases that give no ``config``.
        markers: more strings to stream as one token each, besides the dialect's own
            tags.

    Returns:
        Each case's name -> its merged events.

    Raises:
        AssertionError: a case reads differently under one chunking (the message names
            it and the first event that differs), its events do not tile its text, or it
            does not make its calls, errors, text, thinking, framing or notices.
    """
    tools = TOOLS if tools is None else tools
    loaded = load_cases(cases) if isinstance(cases, (str, Path)) else list(cases)
    results: dict[str, list[ParseEvent]] = {}
    for case in loaded:
        label = str(case.get("name", "case"))
        options = {**(config or {}), **case.get("config", {})}
        parser_config = ParserConfig(dialect=name, **options)
        more = (
            [("in the case's own chunks", [str(c) for c in case["chunks"]])]
            if "chunks" in case
            else []
        )
        reference = check_chunkings(
            functools.partial(StreamToolParser, dict(tools), config=parser_config),
            str(case["text"]),
            markers=dialect_markers(parser_config).union(markers),
            more=more,
            cut=bool(case.get("cut")),
            label=f"case {label!r}",
        )
        _check_outcome(label, case, reference, tools)
        results[label] = reference
    return results


def _check_outcome(
    label: str,
    case: Mapping[str, Any],
    events: list[ParseEvent],
    tools: Mapping[str, type[BaseModel]],
) -> None:
    calls = [
        (e.tool_name, e.tool_instance.model_dump(by_alias=True))
        for e in events
        if isinstance(e, ToolCallEvent)
    ]
    want = _expected_calls(case, tools)
    assert calls == want, f"case {label!r}: calls {calls}, expected {want}"
    if "errors" in case:
        errors = [e.error_type for e in events if isinstance(e, ParseErrorEvent)]
        assert errors == case["errors"], (
            f"case {label!r}: errors {errors}, expected {case['errors']}"
        )
    if "text_out" in case:
        text = "".join(e.text for e in events if isinstance(e, TextOutputEvent))
        assert text == case["text_out"], (
            f"case {label!r}: text {text!r}, expected {case['text_out']!r}"
        )
    if "thinking" in case:
        thinking = [e.content for e in events if isinstance(e, ThinkingEvent)]
        expected = case["thinking"]
        expected = [expected] if isinstance(expected, str) else list(expected)
        assert thinking == expected, f"case {label!r}: thinking {thinking}, expected {expected}"
    if "framing" in case:
        framing = [e.text for e in events if isinstance(e, FramingEvent)]
        assert framing == case["framing"], (
            f"case {label!r}: framing {framing}, expected {case['framing']}"
        )
    if "notices" in case:
        notices = [e.code for e in events if isinstance(e, NoticeEvent)]
        assert notices == case["notices"], (
            f"case {label!r}: notices {notices}, expected {case['notices']}"
        )
