"""The Server-Sent Events reader shared by the client and the proxy, on any cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser.llm.sse import SSEDecoder

FIELDS = st.sampled_from(["data", "event", "error", "id", ": comment", "retry"])
# Any character but a line end, and no lone surrogate: a body is UTF-8 bytes.
VALUES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=12,
)
ENDS = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(FIELDS, VALUES, ENDS), max_size=12))
    out = []
    for field, value, end in lines:
        out.append(f"{field}: {value}{end}" if draw(st.booleans()) else end)
    return "".join(out).encode()


def decode(pieces: list[bytes]) -> list[tuple[str | None, str, str | None]]:
    decoder = SSEDecoder()
    events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.finish()
    return [(e.name, e.data, e.error) for e in events]


@settings(max_examples=300, deadline=None)
@given(bodies(), st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_any_cut_gives_the_same_events(body: bytes, cuts: list[int]) -> None:
    points = sorted({min(c, len(body)) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert decode(pieces) == decode([body])
    assert decode([bytes([b]) for b in body]) == decode([body])


def test_crlf_cut_between_its_two_bytes_is_one_line_end() -> None:
    assert decode([b"data: a\r", b"\n\r\n"]) == [(None, "a", None)]
    assert decode([b"data: a\r", b"\ndata: b\n\n"]) == [(None, "a\nb", None)]
