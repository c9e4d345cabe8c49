"""One OpenAIChatModel used from several event loops: one SDK client per loop.

An SDK client's pooled connections belong to the loop that opened them.  A model used in
the caller's ``asyncio.run(...)`` and then by a sync decorated function (which runs on
the library's own loop), or by both at once from two threads, must work from each.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest

from stream_parser import llm_function
from stream_parser.errors import ConfigError

from .sse_server import SSEServer, chunk, sse

openai = pytest.importorskip("openai")
from stream_parser.llm import OpenAIChatModel  # noqa: E402

USER: list[Any] = [{"role": "user", "content": "Hi"}]


@pytest.fixture
def server():
    with SSEServer() as running:
        yield running


def kept_alive(text: str) -> Any:
    # The connection stays open and pooled in the client, as with a real server.
    return sse([chunk(content=text), chunk(finish_reason="stop")], keep_alive=True)


async def reply(model: OpenAIChatModel) -> str:
    parts = []
    async for delta in model.stream(USER):
        assert delta.error is None, delta.error
        parts.append(delta.content or "")
    return "".join(parts)


# The caller's asyncio.run() closes its loop with the model's pooled connection still
# open, as a user's program does: collected here, where its warning is expected.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_model_from_asyncio_run_then_a_sync_function_then_two_threads(server):
    server.script(*(kept_alive(f"answer {n}") for n in range(6)))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    assert asyncio.run(reply(model)) == "answer 0"  # the caller's loop, closed after

    @llm_function(model)
    def answer(question: str) -> str:
        """Answer the question."""

    assert answer("first?") == "answer 1"  # the library's own loop, another thread

    results: list[str] = []
    failures: list[BaseException] = []

    def in_thread(run: Any) -> None:
        try:
            results.append(run())
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [
        threading.Thread(target=in_thread, args=(lambda: asyncio.run(reply(model)),)),
        threading.Thread(target=in_thread, args=(lambda: answer("second?"),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert sorted(results) == ["answer 2", "answer 3"]
    assert len(server.requests) == 4
    asyncio.run(model.aclose())
    gc.collect()


def test_aclose_closes_the_clients_of_every_loop(server):
    # One client on the library's own loop (a sync decorated function), one on the
    # caller's; aclose() in the caller's loop closes both, each on its own loop.
    server.script(kept_alive("from the library's loop"), kept_alive("from mine"))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    @llm_function(model)
    def answer(question: str) -> str:
        """Answer the question."""

    assert answer("?") == "from the library's loop"

    async def main() -> tuple[Any, Any]:
        assert await reply(model) == "from mine"
        mine = model.client
        others = [c for c in model._loop_clients.values() if c is not mine]
        await model.aclose()
        return mine, others

    mine, others = asyncio.run(main())
    assert len(others) == 1 and others[0] is not mine
    assert mine.is_closed() and others[0].is_closed()


def test_a_given_client_says_plainly_that_it_belongs_to_another_loop(server):
    server.script(kept_alive("a"))
    client = openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0)
    model = OpenAIChatModel("test-model", client=client)

    async def first() -> str:
        try:
            return await reply(model)
        finally:
            await client.close()  # the caller owns it: closed in its loop

    assert asyncio.run(first()) == "a"
    with pytest.raises(ConfigError, match="belongs to the event loop that first used it"):
        asyncio.run(reply(model))
    assert len(server.requests) == 1  # nothing sent
