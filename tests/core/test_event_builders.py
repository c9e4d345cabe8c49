"""The parser's fast event builders give the events their constructors give.

The builders (``_fast_text`` and friends in ``stream_parser.core.events``) fill an
instance of a plain *twin* class and then switch its class to the event's, which CPython
allows only when both have the same layout.  How a slotted dataclass lays out its slots
changed between Python versions (3.10 repeats the slots of its bases, 3.11 does not), so
these tests run on every supported version and compare the builders' events with the
constructors' on the running one.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from collections.abc import Callable

import pytest

from stream_parser.core.events import (
    ParseEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolParamDeltaEvent,
    _builder_twin,
    _fast_arguments_delta,
    _fast_param_delta,
    _fast_text,
    _fast_thinking_delta,
)

PAIRS: list[tuple[str, Callable[[], ParseEvent], Callable[[], ParseEvent]]] = [
    (
        "text",
        lambda: _fast_text("hello", (3, 8)),
        lambda: TextOutputEvent(text="hello", span=(3, 8)),
    ),
    (
        "thinking_delta",
        lambda: _fast_thinking_delta("hmm", (0, 3)),
        lambda: ThinkingDeltaEvent(delta="hmm", span=(0, 3)),
    ),
    (
        "tool_param_delta",
        lambda: _fast_param_delta("search", "query", "cats", 2, (10, 14)),
        lambda: ToolParamDeltaEvent(
            tool_name="search", param="query", delta="cats", call_index=2, span=(10, 14)
        ),
    ),
    (
        "tool_arguments_delta",
        lambda: _fast_arguments_delta("search", '{"q"', 1, "call_1", (4, 8)),
        lambda: ToolArgumentsDeltaEvent(
            tool_name="search", delta='{"q"', call_index=1, call_id="call_1", span=(4, 8)
        ),
    ),
]
IDS = [name for name, _, _ in PAIRS]


@pytest.mark.parametrize(("name", "fast", "slow"), PAIRS, ids=IDS)
def test_a_fast_built_event_is_the_constructors_event(
    name: str, fast: Callable[[], ParseEvent], slow: Callable[[], ParseEvent]
) -> None:
    built, constructed = fast(), slow()
    assert type(built) is type(constructed)
    assert built.kind == name
    assert built == constructed
    assert hash(built) == hash(constructed)
    assert repr(built) == repr(constructed)
    assert dataclasses.asdict(built) == dataclasses.asdict(constructed)  # type: ignore[call-overload]
    assert sys.getsizeof(built) == sys.getsizeof(constructed)


@pytest.mark.parametrize(("name", "fast", "slow"), PAIRS, ids=IDS)
def test_a_fast_built_event_is_frozen_and_copies_like_the_constructors(
    name: str, fast: Callable[[], ParseEvent], slow: Callable[[], ParseEvent]
) -> None:
    built = fast()
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.span = (0, 0)  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(built)) == slow()
    assert copy.copy(built) == slow()
    assert dataclasses.replace(built, span=(0, 0)) == dataclasses.replace(slow(), span=(0, 0))  # type: ignore[type-var]


@pytest.mark.parametrize(
    "event", [TextOutputEvent, ThinkingDeltaEvent, ToolParamDeltaEvent, ToolArgumentsDeltaEvent]
)
def test_the_twin_adds_the_slots_the_event_adds(event: type[ParseEvent]) -> None:
    twin = _builder_twin(event)
    own = event.__dict__.get("__slots__", ())
    if own:  # Python 3.10: the dataclass repeats its base's slots
        assert twin.__base__ is event.__base__
        assert sorted(twin.__dict__["__slots__"]) == sorted(own)
    else:
        assert twin is event.__base__
    assert twin.__basicsize__ == event.__basicsize__


def test_the_package_imports_in_a_fresh_interpreter() -> None:
    # The builders are checked at import; a layout CPython refuses fails the import.
    done = subprocess.run(
        [sys.executable, "-c", "import stream_parser; import stream_parser.core.events"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
