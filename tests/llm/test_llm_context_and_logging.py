"""OpenAIChatModel: a context that is too long, said plainly; and what it logs."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from typing import Any

import pytest

from stream_parser.core.chunks import ChatDelta
from stream_parser.llm import ContextLengthError, ModelError, OpenAIChatModel

from .sse_server import SSEServer, chunk, error, json_answer, sse

pytest.importorskip("openai")

USER: list[Any] = [{"role": "user", "content": "hi"}]
PLAIN = "the conversation is too long for the model's context (context length exceeded)"
LOGGER = "stream_parser.llm"


@pytest.fixture
def server():
    with SSEServer() as running:
        yield running


def collect(server: SSEServer, messages: Any = None, **options: Any) -> list[ChatDelta]:
    async def main() -> list[ChatDelta]:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:
            return [delta async for delta in model.stream(messages or USER, **options)]

    return asyncio.run(main())


# --- the context is too long ----------------------------------------------------------------

OPENAI_BODY = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your "
        "messages resulted in 8227 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VLLM_BODY = {
    "object": "error",
    "message": "This model's maximum context length is 4096 tokens. However, you requested "
    "5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length "
    "of the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
VLLM_ENGINE_BODY = {
    "object": "error",
    "message": "Prompt length of 5016 is longer than the maximum model length of 4096.",
    "type": "BadRequestError",
    "code": 400,
}
LLAMA_CPP_BODY = {
    "error": {
        "code": 400,
        "message": "request (4476 tokens) exceeds the available context size (4096 tokens)",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4476,
        "n_ctx": 4096,
    }
}
CODE_ONLY_BODY = {"error": {"message": "too long", "code": "context_length_exceeded"}}
TYPE_ONLY_BODY = {"error": {"message": "too long", "type": "exceed_context_size_error"}}


@pytest.mark.parametrize(
    "body",
    [OPENAI_BODY, VLLM_BODY, VLLM_ENGINE_BODY, LLAMA_CPP_BODY, CODE_ONLY_BODY, TYPE_ONLY_BODY],
    ids=["openai", "vllm", "vllm-engine", "llama.cpp", "code-only", "type-only"],
)
def test_a_context_too_long_raises_context_length_error(server, body):
    server.script(json_answer(body, status=400))
    with pytest.raises(ContextLengthError) as caught:
        collect(server)
    assert isinstance(caught.value, ModelError)  # code that catches ModelError still does
    assert caught.value.status_code == 400
    assert caught.value.message.startswith(PLAIN + "; the server said: ")
    error = body.get("error", body)
    assert caught.value.message.endswith(error["message"])
    assert str(caught.value) == f"400: {caught.value.message}"


@pytest.mark.parametrize(
    "response",
    [
        error(400, "'temperature' must be at most 2"),
        error(500, "internal error"),
        json_answer({"error": {"message": "bad", "code": "invalid_value"}}, status=400),
    ],
)
def test_other_errors_are_plain_model_errors(server, response):
    server.script(response)
    with pytest.raises(ModelError) as caught:
        collect(server)
    assert type(caught.value) is ModelError
    assert PLAIN not in caught.value.message


def test_a_context_error_in_the_stream_says_so(server):
    server.script(sse([{"error": LLAMA_CPP_BODY["error"]}]))
    deltas = collect(server)
    assert deltas[-1].error is not None
    assert deltas[-1].error.startswith(f"the server sent an error in the stream: {PLAIN}")
    assert "exceeds the available context size" in deltas[-1].error


def test_a_context_error_as_a_json_answer_says_so(server):
    server.script(json_answer(VLLM_BODY, status=200))
    deltas = collect(server)
    assert deltas[-1].error is not None
    assert PLAIN in deltas[-1].error


def test_llama_cpp_closing_an_empty_stream_is_still_an_error_delta(server):
    # What llama-server can do when the prompt overflows: a 200 stream with no data.
    server.script(sse([], done=False))
    deltas = collect(server)
    assert [delta.error for delta in deltas] == [
        "the stream ended without a finish_reason (the server sent no data; with llama.cpp "
        "this usually means the prompt is longer than the server's context size)"
    ]


# --- logging --------------------------------------------------------------------------------

REPLY = sse(
    [
        chunk(content="Hello"),
        chunk(finish_reason="stop"),
        chunk(no_choices=True, usage={"prompt_tokens": 3, "completion_tokens": 1}),
    ]
)
SECRET = "the content of the conversation"


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(LOGGER)]


def test_a_request_and_its_reply_are_logged_at_info(server, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    server.script(REPLY)
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {}}}]
    collect(
        server,
        [{"role": "system", "content": "s"}, {"role": "user", "content": SECRET}],
        tools=tools,
        temperature=0.5,
        extra_headers={"Authorization": "Bearer sk-secret"},
    )
    found = records(caplog)
    assert [r.levelno for r in found] == [logging.INFO, logging.INFO]
    request, reply = (r.getMessage() for r in found)
    assert request.startswith("model test-model: request with 2 messages, options ")
    assert "'temperature': 0.5" in request
    assert "'tools': ['weather']" in request
    assert "'extra_headers': ['Authorization']" in request
    assert SECRET not in request  # the messages only at DEBUG
    assert "sk-secret" not in request  # header values never
    assert reply.startswith("model test-model: reply ended (")
    assert "finish_reason=stop" in reply
    assert "'prompt_tokens': 3" in reply
    assert " s)" in reply


def test_the_messages_are_logged_at_debug(server, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    server.script(REPLY)
    collect(server, [{"role": "user", "content": SECRET}])
    debug = [r.getMessage() for r in records(caplog) if r.levelno == logging.DEBUG]
    assert len(debug) == 1
    assert SECRET in debug[0]
    assert debug[0].startswith("model test-model: messages [")


def test_an_error_before_the_reply_is_logged_at_info(server, caplog):
    # Not as a warning: the error is raised, and the caller decides what it deserves.
    caplog.set_level(logging.INFO, logger=LOGGER)
    server.script(json_answer(LLAMA_CPP_BODY, status=400))
    with pytest.raises(ContextLengthError):
        collect(server)
    assert not [r for r in records(caplog) if r.levelno >= logging.WARNING]
    failed = [r.getMessage() for r in records(caplog) if "no reply" in r.getMessage()]
    assert len(failed) == 1
    assert failed[0].startswith("model test-model: no reply (")
    assert PLAIN in failed[0]


def test_an_error_mid_reply_is_logged_at_info(server, caplog):
    # Not as a warning: the caller is given the error as the reply's last delta.
    caplog.set_level(logging.INFO, logger=LOGGER)
    server.script(sse([chunk(content="so far")], drop=True))
    deltas = collect(server)
    assert deltas[-1].error is not None
    assert not [r for r in records(caplog) if r.levelno >= logging.WARNING]
    failed = [r.getMessage() for r in records(caplog) if "reply failed" in r.getMessage()]
    assert len(failed) == 1
    assert failed[0].startswith("model test-model: reply failed (")
    assert deltas[-1].error in failed[0]


def test_a_reply_the_caller_stops_reading_is_logged(server, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    server.script(REPLY)

    async def main() -> None:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:
            stream = model.stream(USER)
            async for _ in stream:
                break
            await stream.aclose()  # type: ignore[attr-defined]

    asyncio.run(main())
    assert "reply closed by the caller before its end" in records(caplog)[-1].getMessage()


def test_nothing_is_logged_below_the_level_set(server, caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    server.script(REPLY)
    collect(server)
    assert records(caplog) == []


def test_nothing_is_printed_by_default():
    # Without any logging configuration, Python prints warnings to stderr unless the
    # library has a handler of its own: the package logger, `stream_parser`, has a
    # NullHandler.
    code = (
        "import logging, stream_parser.llm\n"
        "logging.getLogger('stream_parser.llm.openai').warning('should not be printed')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stderr == ""
    assert done.stdout == ""
