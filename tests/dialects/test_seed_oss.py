"""seed_oss: qwen3_coder's tags inside ``<seed:tool_call>``, read and written.

The fixture replies are rendered from Seed-OSS's chat template
(``tests/fixtures/dialects/seed_oss/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import ParseEvent, ToolCallEvent
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.seed_oss import SeedOssDialect
from tests.dialects.family import FamilyChecks
from tests.dialects.support import FAMILY_TOOLS, read, read_calls
from tests.fixtures.dialects.seed_oss import render

SEED = SeedOssDialect()
SEED_THINK = ("<seed:think>", "</seed:think>")


class TestSeedOss(FamilyChecks):
    dialect = "seed_oss"
    render = render
    names = (
        ("ByteDance-Seed/Seed-OSS-36B-Instruct", ModelDialect("seed_oss", SEED_THINK)),
        ("seed-oss:36b", ModelDialect("seed_oss", SEED_THINK)),
        ("seed_oss", ModelDialect("seed_oss", SEED_THINK)),
    )
    usage = ("<parameter=path>a.py</parameter>", "<seed:tool_call>")
    refuses_values = True  # markup the reader would take for the call's structure


class Settings(BaseModel):
    flags: dict[str, bool]
    ratio: float | None = None
    note: str = ""


ALL_TOOLS = {**FAMILY_TOOLS, "settings": Settings}


def _events(text: str) -> list[ParseEvent]:
    return read("seed_oss", text, tools=ALL_TOOLS)


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    return read_calls("seed_oss", text, tools=ALL_TOOLS)


def _block(**values: str) -> str:
    params = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in values.items())
    return f"<seed:tool_call>\n<function=settings>\n{params}</function>\n</seed:tool_call>"


def test_values_are_json_then_python_literals() -> None:
    text = _block(flags="{'a': True, 'b': false}", ratio="None", note="None")
    read = {"flags": {"a": True, "b": False}, "ratio": None, "note": "None"}
    assert _calls(text) == [("settings", read)]
    assert _calls(_block(flags='{"a": true}', ratio="0.5")) == [
        ("settings", {"flags": {"a": True}, "ratio": 0.5, "note": ""})
    ]


def test_a_value_that_is_code_is_never_evaluated() -> None:
    events = _events(_block(flags="__import__('os').system('echo hi')"))
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    assert [e.error_type for e in events if e.kind == "error"] == ["invalid_params"]


def test_format_call_refuses_what_cannot_be_read_back() -> None:
    end = "</function>\n</seed:tool_call>"
    for value in ("a</parameter>\n<parameter=x>", "x\n<parameter=x>", end):
        with pytest.raises(ValueError, match="cannot be written"):
            SEED.format_call("write_to_file", {"content": value})
