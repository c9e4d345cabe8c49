"""The observation of a call that ran, written without rendering the shipped template."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser.agent.reply import _result_observation
from stream_parser.prompts import text as prompts


@settings(max_examples=50, deadline=None)
@given(
    label=st.text(min_size=1, max_size=20),
    text=st.text(max_size=60),
    language=st.sampled_from(["en", "zh"]),
)
def test_it_is_the_shipped_template_rendered(label: str, text: str, language: str) -> None:
    written = _result_observation(label, text, language)
    assert written == prompts.result_observation(label, text, language)
    # Other templates replaced, not this one: still the shipped one.
    others = {"native_error": "{{ code }}: {{ text }}"}
    assert _result_observation(label, text, language, others) == written


def test_a_replaced_template_is_rendered() -> None:
    mine = {"observation": "<{{ label }} {{ status }}>{{ text }}"}
    assert _result_observation("read", "hi", "en", mine) == "<read result>hi"
    assert _result_observation("read", "hi", "zh", {"observation": "en/observation"}) == (
        "[read] result:\nhi"
    )
