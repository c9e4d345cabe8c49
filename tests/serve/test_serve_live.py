"""``stream-parser serve`` in front of a real model server; skipped unless one is configured.

Set ``STREAM_PARSER_LIVE_BASE_URL`` and ``STREAM_PARSER_LIVE_MODEL`` (the server of
``tools/live-server.sh``: llama.cpp, model ``local``), then run ``pytest -m live
tests/serve``.  The assertions are about the protocol (a reply that ends properly, routes
relayed, a history with calls accepted), not about what a small model says.  What the
proxy sends upstream with ``--render-tools`` is checked against the loopback upstream in
``test_serve_sdk.py``, where the request can be seen.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai

from tests.live import API_KEY as API_KEY_SET
from tests.live import BASE_URL, MODEL, live_marks

pytestmark = live_marks()

API_KEY = API_KEY_SET or "none"

READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file of the project.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "the file's path"}},
            "required": ["path"],
        },
    },
}
ASK = [{"role": "user", "content": "Read the file README.md and tell me what it says."}]
SHORT: dict[str, Any] = {"max_tokens": 24, "temperature": 0, "seed": 1}


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key=API_KEY, max_retries=0, timeout=300)


def streamed(url: str, **options: Any) -> tuple[str, str | None]:
    """The content and finish reason of a streamed reply (an error raises)."""
    content, finish = [], None
    with client(url) as sdk:
        for item in sdk.chat.completions.create(
            model=MODEL or "", stream=True, **{**SHORT, **options}
        ):
            for choice in item.choices:
                content.append(choice.delta.content or "")
                finish = choice.finish_reason or finish
    return "".join(content), finish


def test_with_a_dialect_the_sdk_gets_the_streamed_reply(proxy) -> None:
    server = proxy("--dialect", "xml", upstream_url=BASE_URL)
    content, finish = streamed(server.url, messages=ASK, tools=[READ_FILE])
    assert finish in ("stop", "length", "tool_calls")
    assert isinstance(content, str)


def test_an_unknown_model_name_passes_through_unparsed(proxy) -> None:
    assert BASE_URL
    server = proxy(upstream_url=BASE_URL)  # --dialect auto: "local" is no family's name
    through = streamed(server.url, messages=ASK)
    direct = streamed(BASE_URL, messages=ASK)
    assert through == direct  # greedy decoding: the same reply, byte for byte relayed


def test_models_pass_through(proxy) -> None:
    assert BASE_URL
    server = proxy(upstream_url=BASE_URL)
    assert httpx.get(server.url + "/models").json() == httpx.get(BASE_URL + "/models").json()


def test_rendered_tools_and_a_second_turn_with_calls_are_answered(proxy) -> None:
    server = proxy(
        "--render-tools", "--instructions-role", "user", "--dialect", "xml", upstream_url=BASE_URL
    )
    history = [
        *ASK,
        {
            "role": "assistant",
            "content": "Let me read it.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "# Demo\nA small demo project."},
    ]
    _, finish = streamed(server.url, messages=history, tools=[READ_FILE])
    assert finish in ("stop", "length", "tool_calls")
    with client(server.url) as sdk:
        whole = sdk.chat.completions.create(
            model=MODEL or "", messages=history, tools=[READ_FILE], **SHORT
        )
    assert whole.choices[0].finish_reason in ("stop", "length", "tool_calls")
