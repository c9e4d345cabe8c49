"""The chunk encoder and the rewriter, without a server: what a client is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stream_parser.core.events import (
    NoticeEvent,
    ParseErrorEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
)
from stream_parser.dialects import get_dialect
from stream_parser.encoders.openai_chunks import ChoiceEncoder, completion_message
from stream_parser.errors import ConfigError
from stream_parser.serve.rewrite import ChatRewriter, RegistryCache
from stream_parser.serve.settings import ProxySettings
from stream_parser.tools import ToolRegistry

ADD: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 0}},
                "required": ["a"],
            },
        },
    }
]


def add_call(call_index: int, call_id: str | None, **args: int) -> ToolCallEvent:
    model = ToolRegistry(ADD)["add"]
    return ToolCallEvent(
        tool_name="add",
        tool_instance=model(**args),
        raw=json.dumps(args),
        call_index=call_index,
        call_id=call_id,
        span=(0, 0),
    )


def test_the_first_entry_has_the_role_and_every_entry_an_index() -> None:
    encoder = ChoiceEncoder(2)
    first = encoder.start()
    assert first == {
        "index": 2,
        "delta": {"role": "assistant", "content": ""},
        "logprobs": None,
        "finish_reason": None,
    }
    entries = encoder.encode([TextOutputEvent(text="a", span=(0, 1))])
    assert all(e["index"] == 2 for e in entries)


def test_runs_of_text_and_reasoning_are_merged_in_order() -> None:
    encoder = ChoiceEncoder(reasoning_field="reasoning")
    events = [
        ThinkingDeltaEvent(delta="hm", span=(0, 2)),
        ThinkingDeltaEvent(delta="m", span=(2, 3)),
        TextOutputEvent(text="He", span=(3, 5)),
        TextOutputEvent(text="llo", span=(5, 8)),
        NoticeEvent(code="x", message="left out", span=(8, 8)),
    ]
    assert [e["delta"] for e in encoder.encode(events)] == [
        {"reasoning": "hmm"},
        {"content": "Hello"},
    ]


def test_calls_are_numbered_with_no_gap_and_keep_only_what_the_model_wrote() -> None:
    encoder = ChoiceEncoder()
    failed = ParseErrorEvent(
        error_type="invalid_params", message="bad", call_index=1, span=(10, 20), tool_name="add"
    )
    entries = encoder.encode(
        [add_call(0, "id0", a=1), failed, TextOutputEvent(text="raw", span=(10, 20))]
    )
    entries += encoder.encode([add_call(2, None, a=2, b=3)])
    calls = [e["delta"]["tool_calls"][0] for e in entries if "tool_calls" in e["delta"]]
    assert [c["index"] for c in calls] == [0, 1]
    assert calls[0]["id"] == "id0" and calls[1]["id"].startswith("call_")
    assert json.loads(calls[0]["function"]["arguments"]) == {"a": 1}  # no default added
    assert json.loads(calls[1]["function"]["arguments"]) == {"a": 2, "b": 3}
    assert all(c["type"] == "function" for c in calls)
    assert {"content": "raw"} in [e["delta"] for e in entries]  # the failed call, as text
    assert encoder.finish("stop")["finish_reason"] == "tool_calls"


def test_bad_calls_error_replaces_the_raw_text_by_one_line() -> None:
    encoder = ChoiceEncoder(bad_calls="error")
    events = [
        TextOutputEvent(text="Hi ", span=(0, 3)),
        ParseErrorEvent(error_type="malformed_tool", message="cannot read\nthe call", span=(3, 9)),
        TextOutputEvent(text="<bad>", span=(3, 8)),
        TextOutputEvent(text="!", span=(8, 9)),
        TextOutputEvent(text=" bye", span=(9, 13)),
    ]
    (entry,) = encoder.encode(events)
    assert entry["delta"]["content"] == (
        "Hi \n[tool call not run (malformed_tool): cannot read the call]\n bye"
    )


def test_a_failed_native_call_goes_out_as_its_name_and_raw_arguments() -> None:
    from stream_parser.core.events import ToolArgumentsDeltaEvent, ToolCallStartEvent

    encoder = ChoiceEncoder()
    events = [
        ToolCallStartEvent(tool_name="nope", call_index=0, call_id="c", span=(5, 5)),
        ToolArgumentsDeltaEvent(tool_name="nope", delta='{"x"', call_index=0, span=(5, 5)),
        ToolArgumentsDeltaEvent(tool_name="nope", delta=": 1}", call_index=0, span=(5, 5)),
        ParseErrorEvent(
            error_type="unknown_tool", message="?", call_index=0, tool_name="nope", span=(5, 5)
        ),
    ]
    assert [e["delta"] for e in encoder.encode(events)] == [{"content": 'nope({"x": 1})'}]


@pytest.mark.parametrize(
    ("upstream", "calls", "expected"),
    [
        ("stop", 1, "tool_calls"),
        ("tool_calls", 0, "stop"),
        ("length", 1, "length"),
        (None, 0, "stop"),
    ],
)
def test_finish_reason(upstream: str | None, calls: int, expected: str) -> None:
    encoder = ChoiceEncoder()
    if calls:
        encoder.encode([add_call(0, "x", a=1)])
    assert encoder.finish(upstream)["finish_reason"] == expected


def test_completion_message() -> None:
    encoder = ChoiceEncoder()
    entries = [
        encoder.start(),
        *encoder.encode([ThinkingDeltaEvent(delta="hm", span=(0, 0)), add_call(0, "c", a=1)]),
        encoder.finish("stop"),
    ]
    message, finish = completion_message(entries)
    assert finish == "tool_calls"
    assert message == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "hm",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
        ],
    }


# --- the rewriter -------------------------------------------------------------------------


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return out + (b"data: [DONE]\n\n" if done else b"")


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {
        "id": "up-1",
        "created": 7,
        "model": "m",
        "system_fingerprint": "fp",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }


def client_events(out: bytes) -> list[Any]:
    lines = [line[6:] for line in out.decode().split("\n\n") if line.startswith("data: ")]
    return [line if line == "[DONE]" else json.loads(line) for line in lines]


def rewrite(body: dict[str, Any], upstream: bytes, cut: int = 0, **settings: Any) -> bytes:
    rewriter = ChatRewriter(body, ProxySettings(**settings), RegistryCache())
    if cut:
        out = b"".join(rewriter.feed(upstream[i : i + cut]) for i in range(0, len(upstream), cut))
    else:
        out = rewriter.feed(upstream)
    return out + rewriter.close()


HERMES_REPLY = 'I add. <tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>'
BODY = {"model": "Qwen/Qwen3-8B", "stream": True, "messages": [], "tools": ADD}


@pytest.mark.parametrize("cut", [0, 1, 7])
def test_a_written_call_becomes_a_native_call_with_the_upstreams_identity(cut: int) -> None:
    upstream = sse(
        chunk({"role": "assistant"}),
        *(chunk({"content": HERMES_REPLY[i : i + 4]}) for i in range(0, len(HERMES_REPLY), 4)),
        chunk({}, "stop"),
    )
    events = client_events(rewrite(BODY, upstream, cut))
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert {(c["id"], c["created"], c["model"], c["system_fingerprint"]) for c in chunks} == {
        ("up-1", 7, "m", "fp")
    }
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    # The space before the call is framing: not content.
    assert "".join(d.get("content", "") for d in deltas) == "I add."
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert [(c["index"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        (0, "add", '{"a": 1}')
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_an_end_without_finish_reason_is_an_error_after_the_text_and_never_a_call() -> None:
    cut_call = 'Hi <tool_call>\n{"name": "add", "arguments": {"a": 1'
    out = client_events(rewrite(BODY, sse(chunk({"content": cut_call}), done=False)))
    assert out[-1]["error"]["message"] == "the upstream's stream ended without a finish_reason"
    deltas = [c["choices"][0]["delta"] for c in out[:-1]]
    assert "".join(d.get("content", "") for d in deltas) == cut_call  # nothing lost
    assert not any("tool_calls" in d for d in deltas)


@pytest.mark.parametrize(
    ("upstream", "message"),
    [
        (b'data: {"choices": [{"delta": {"content": "caf\xc3', "not UTF-8"),
        (b"data: {not json}\n\n", "not JSON"),
        (b'event: error\ndata: {"error": {"message": "boom"}}\n\n', "boom"),
        (b"", "without sending any chunk"),
    ],
)
def test_faults_are_one_error_event(upstream: bytes, message: str) -> None:
    raw = upstream.replace(b"\xc3", b"\xc3\x28\n\n") if b"\xc3" in upstream else upstream
    out = client_events(rewrite(BODY, raw))
    assert message in out[-1]["error"]["message"]


def test_n_choices_get_one_parser_each_and_usage_passes_through() -> None:
    upstream = sse(
        chunk({"content": '<tool_call>\n{"name": "add", "arguments": {"a": 1}}'}, index=0),
        chunk({"content": "plain"}, index=1),
        chunk({"content": "\n</tool_call>"}, "stop", index=0),
        chunk({}, "stop", index=1),
        {"id": "up-1", "created": 7, "model": "m", "choices": [], "usage": {"total_tokens": 9}},
    )
    out = client_events(rewrite(BODY, upstream))
    by_choice: dict[int, list[dict[str, Any]]] = {0: [], 1: []}
    for c in out[:-1]:
        for choice in c["choices"]:
            by_choice[choice["index"]].append(choice)
    assert by_choice[0][-1]["finish_reason"] == "tool_calls"
    assert by_choice[1][-1]["finish_reason"] == "stop"
    assert "".join(c["delta"].get("content", "") for c in by_choice[1]) == "plain"
    assert out[-2]["usage"] == {"total_tokens": 9} and out[-2]["choices"] == []


def test_unknown_models_pass_through_and_named_dialects_are_used() -> None:
    assert not ChatRewriter({"model": "my-finetune"}, ProxySettings()).parsing
    assert ChatRewriter({"model": "my-finetune"}, ProxySettings(dialect="xml")).dialect == "xml"


def test_unreadable_tools_and_uncarried_names_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        ChatRewriter({**BODY, "tools": [{"type": "function"}]}, ProxySettings())
    slashed = [{"type": "function", "function": {"name": "github/create_issue"}}]
    with pytest.raises(ConfigError, match="xml dialect"):
        ChatRewriter({"model": "x", "tools": slashed}, ProxySettings(dialect="xml"))
    ChatRewriter({"model": "x", "tools": slashed}, ProxySettings(dialect="hermes"))


def test_raw_output_is_asked_for_a_dialect_of_special_tokens() -> None:
    body = {"model": "mistralai/Mistral-7B-Instruct-v0.3", "chat_template_kwargs": {"x": 1}}
    sent = ChatRewriter(body, ProxySettings()).upstream_body
    assert sent["skip_special_tokens"] is False
    assert sent["chat_template_kwargs"] == {"spaces_between_special_tokens": False, "x": 1}
    assert "skip_special_tokens" not in ChatRewriter(BODY, ProxySettings()).upstream_body
    off = ChatRewriter(body, ProxySettings(raw_output=False)).upstream_body
    assert "skip_special_tokens" not in off


def test_thinking_turned_off_in_the_template_starts_with_the_answer() -> None:
    body = {"model": "Qwen/Qwen3-30B-A3B-Thinking-2507"}
    assert ChatRewriter(body, ProxySettings())._config.starts_in_thinking
    off = {**body, "chat_template_kwargs": {"enable_thinking": False}}
    assert not ChatRewriter(off, ProxySettings())._config.starts_in_thinking
    forced = ChatRewriter({"model": "Qwen/Qwen3-8B"}, ProxySettings(start_in_reasoning="yes"))
    assert forced._config.starts_in_thinking


def test_a_whole_completion_is_rewritten() -> None:
    body = {**BODY, "stream": False}
    completion = {
        "id": "c1",
        "object": "chat.completion",
        "created": 3,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "<think>hm</think>" + HERMES_REPLY},
                "finish_reason": "stop",
            }
        ],
        "usage": {"total_tokens": 5},
    }
    rewriter = ChatRewriter(body, ProxySettings())
    out = json.loads(rewriter.rewrite_completion(json.dumps(completion).encode()))
    assert out["id"] == "c1" and out["usage"] == {"total_tokens": 5}
    (choice,) = out["choices"]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["content"] == "I add." and message["reasoning_content"] == "hm"
    assert message["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 1}'}
    assert rewriter.rewrite_completion(b'{"error": "x"}') == b'{"error": "x"}'


def _native(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _rendered_history(dialect: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages sent upstream for a turn of ``calls`` and their results."""
    body = {
        "model": "local",
        "tools": ADD,
        "messages": [
            {"role": "user", "content": "Add twice."},
            {"role": "assistant", "content": "Adding.", "tool_calls": calls},
            *(
                {"role": "tool", "tool_call_id": c["id"], "content": f"result {c['id']}"}
                for c in calls
            ),
        ],
    }
    settings = ProxySettings(dialect=dialect, render_tools=True)
    messages: list[dict[str, Any]] = ChatRewriter(body, settings).upstream_body["messages"]
    return messages


def test_a_turn_of_two_calls_is_written_for_xlam_as_one_array() -> None:
    calls = [_native("c1", "add", '{"a": 1, "b": 2}'), _native("c2", "add", '{"a": 3}')]
    messages = _rendered_history("xlam", calls)
    (assistant,) = [m for m in messages if m["role"] == "assistant"]
    assert "tool_calls" not in assistant
    assert assistant["content"] == (
        'Adding.\n[{"name": "add", "arguments": {"a": 1, "b": 2}}, '
        '{"name": "add", "arguments": {"a": 3}}]'
    )
    assert messages[-1]["role"] == "user"
    assert "result c1" in messages[-1]["content"] and "result c2" in messages[-1]["content"]


def test_a_call_without_an_object_of_arguments_splits_the_turn_where_it_stands() -> None:
    calls = [
        _native("c1", "add", '{"a": 1}'),
        _native("c2", "add", "not json"),
        _native("c3", "add", '{"a": 2}'),
        _native("c4", "add", '{"a": 3}'),
    ]
    (assistant,) = [m for m in _rendered_history("kimi", calls) if m["role"] == "assistant"]
    kimi = get_dialect("kimi")
    assert assistant["content"] == "\n".join(
        [
            "Adding.",
            kimi.format_calls([("add", {"a": 1})]),
            "add(not json)",
            kimi.format_calls([("add", {"a": 2}), ("add", {"a": 3})]),
        ]
    )


def test_a_past_call_the_format_cannot_carry_is_said_plainly() -> None:
    # qwen3_coder refuses a value holding its closing markup: the request still goes out.
    value = "a</parameter>\n<parameter=b>"
    calls = [_native("c1", "add", json.dumps({"a": value}))]
    (assistant,) = [m for m in _rendered_history("qwen3_coder", calls) if m["role"] == "assistant"]
    assert assistant["content"] == "Adding.\n" + f"add({json.dumps({'a': value})})"
