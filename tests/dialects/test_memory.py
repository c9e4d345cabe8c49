"""Memory while a large value streams in any dialect: a few bytes per input byte.

As in ``tests/core/test_memory.py``: ``tracemalloc`` peaks while the parser reads a call
whose ``content`` is 1 MB, cut into 1-8 character chunks as they are fed.  A reader that
kept each chunk of a value (a string object of tens of bytes per chunk) beside the
block's own text would cost 14-19 bytes per byte; the values are taken from the block's
text when the call closes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from stream_parser import StreamToolParser
from stream_parser.core.config import ParserConfig
from stream_parser.core.events import ToolCallEvent
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.dialects.kimi import format_k3_call
from stream_parser.dialects.llama import format_pythonic_call
from tests.core.test_memory import SIZE, peak_growth, write_file

# Megabyte streams under tracemalloc take seconds each: run with the slow tests.
pytestmark = pytest.mark.slow


def _llama4_list(name: str, args: Mapping[str, Any]) -> str:
    """A Llama 4 pythonic list as ``repr`` writes it: single quotes, Python's escapes."""
    return format_pythonic_call([(name, args)])


# Each dialect as its format_call writes it, Kimi K3's markup beside K2's, and Llama 4's
# pythonic list beside Llama 3's JSON.
WRITERS: list[tuple[str, Callable[[str, Mapping[str, Any]], str]]] = [
    *((name, get_dialect(name).format_call) for name in sorted(DIALECTS)),
    ("kimi", format_k3_call),
    ("llama", _llama4_list),
]


@pytest.mark.parametrize(
    ("dialect", "write"), WRITERS, ids=[*sorted(DIALECTS), "kimi-k3", "llama-pythonic"]
)
def test_a_large_value_costs_a_few_bytes_per_byte(
    dialect: str, write: Callable[[str, Mapping[str, Any]], str]
) -> None:
    body = ("lorem ipsum <b> dolor & sit amet\n" * (SIZE // 33 + 1))[:SIZE]
    config = ParserConfig(dialect=dialect, max_tool_size=4 * SIZE)
    text = write("write_file", {"path": "a", "content": body})
    if config.starts_in_thinking:
        text = "</think>" + text  # the reply starts inside reasoning
    growth, kept = peak_growth(StreamToolParser({"write_file": write_file}, config=config), text)
    calls = [event for event in kept if isinstance(event, ToolCallEvent)]
    assert [call.tool_instance.content for call in calls] == [body]
    # The block's text, one join of it and the value's copies on the way to the model:
    # 3-6.2 bytes per byte in the dialects of this package.  A pythonic call is read whole
    # when it closes, its strings apart from ``ast`` (whose tokens and tree would hold a
    # 1 MB literal 12 times over): 4.1 bytes per byte, 5.2 single-quoted (llama-pythonic).
    assert growth < 7 * SIZE
