"""Reading the input: blocks as they come, UTF-8 decoded across cuts, re-cut to chunk sizes."""

from __future__ import annotations

import io
import itertools
import os
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser.cli._input import SNIFF, chunked, decoded, read_blocks

from ..helpers import splits


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=60), st.lists(st.integers(0, 60), max_size=6))
def test_decoding_does_not_depend_on_where_the_bytes_are_cut(data: bytes, cuts: list[int]) -> None:
    bounds = [0, *sorted(c for c in cuts if c <= len(data)), len(data)]
    blocks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    assert "".join(decoded(blocks, lambda: None)) == data.decode("utf-8", errors="replace")


def test_decoding_at_every_cut_of_a_mixed_input() -> None:
    data = "aé€😀\r\n".encode() + b"\xff\xc3(" + "<think>ü</think>".encode()
    expected = data.decode("utf-8", errors="replace")
    for cut in range(len(data) + 1):
        assert "".join(decoded([data[:cut], data[cut:]], lambda: None)) == expected
    one_by_one = [data[i : i + 1] for i in range(len(data))]
    assert "".join(decoded(one_by_one, lambda: None)) == expected


def test_binary_is_reported_once_and_only_near_the_start() -> None:
    calls: list[int] = []
    found = list(decoded([b"ab", b"\0c\0", b"\0"], lambda: calls.append(1)))
    assert calls == [1]
    assert "".join(found) == "ab\0c\0\0"
    late: list[int] = []
    list(decoded([b"x" * SNIFF, b"\0"], lambda: late.append(1)))
    assert late == []
    text: list[int] = []
    list(decoded(["already text \0"], lambda: text.append(1)))
    assert text == []


@settings(max_examples=150, deadline=None)
@given(
    st.text(max_size=80),
    st.lists(st.integers(0, 80), max_size=5),
    st.integers(1, 9),
    st.integers(0, 9),
    st.integers(0, 3),
)
def test_chunks_rejoin_and_do_not_depend_on_how_the_text_came(
    text: str, cuts: list[int], low: int, extra: int, seed: int
) -> None:
    sizes = (low, low + extra)
    pieces = splits(text, sorted(c for c in cuts if c <= len(text)))
    out = list(chunked(pieces, sizes, seed))
    assert "".join(out) == text
    assert out == list(chunked([text], sizes, seed))
    assert all(low <= len(c) <= low + extra for c in out[:-1])
    assert list(chunked(pieces, None, seed)) == pieces


def test_a_pipe_is_read_as_it_is_written() -> None:
    """read_blocks hands over what the writer sent without waiting for a full block."""
    read_end, write_end = os.pipe()
    with open(read_end, "rb") as reader:
        blocks = read_blocks(reader)
        os.write(write_end, b"first")
        assert next(blocks) == b"first"  # it would hang if it waited for BLOCK bytes
        writer = threading.Thread(
            target=lambda: (os.write(write_end, b"second"), os.close(write_end))
        )
        writer.start()
        assert b"".join(blocks) == b"second"
        writer.join()


def test_a_text_stream_is_read_in_blocks() -> None:
    assert "".join(read_blocks(io.StringIO("x" * 100_000))) == "x" * 100_000
