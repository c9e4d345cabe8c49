"""What ``stream-parser serve`` costs, beside a bare pass-through proxy in the same run.

Run from the repository root (Linux: CPU time is read from ``/proc``)::

    python benchmarks/bench_serve.py                  # the table of docs/performance.md
    python benchmarks/bench_serve.py --runs 5 --chunks 2000
    python benchmarks/bench_serve.py --unparsed       # the proxy relaying an unknown model

Three processes besides this one: a loopback upstream (Starlette under uvicorn, streaming
a recorded-style hermes reply of ``--chunks`` chunks: prose, then two calls), the proxy
(``stream-parser serve --dialect hermes``, one worker), and the pass-through proxy
(``benchmarks/passthrough_proxy.py``: the same Starlette, uvicorn and httpx2 relaying the
bytes unchanged).  The client is ``httpx`` in this process.  Figures:

* **CPU per chunk**: the proxy process's user + system CPU time (``/proc/PID/stat``)
  over ``--streams`` concurrent streams, divided by the upstream chunks relayed; the
  upstream paces its chunks (``--pace``) so that each arrives in a read of its own, as a
  model's tokens do.  Median of ``--runs`` runs; the ratio is taken run by run.
* **parser + encoder**: the same chunks fed to a ``ChatRewriter`` in this process, no
  network: the CPU the rewriting itself adds per chunk.
* **time to first byte**: from sending the request to the first body byte, through each
  proxy and straight from the upstream (median of ``--requests``); "added" is the
  difference with the direct figure.
* **chunks per second**: one worker, the upstream unpaced, at 1, 50 and 200 concurrent
  streams (the client shares the machine).
* **tools**: ``ChatRewriter`` for a request with a new list of 50 tools, and with the
  same list again (the registry cache).

``--unparsed`` asks for a model name no dialect knows, under ``--dialect auto``: the proxy
then relays the reply byte for byte, and the figures are those of its HTTP layer alone.

The machine may be shared: compare figures of one run, and prefer the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = "NousResearch/Hermes-3-Llama-3.1-8B"
READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}


def reply_pieces(count: int) -> list[str]:
    """A reply of ``count`` chunks: prose of short tokens, then two calls (a token each...)."""
    calls = [
        "\n<tool_call>",
        '\n{"name": "read_file", ',
        '"arguments": {"path": "src/app.py"}}',
        "\n</tool_call>",
        "\n<tool_call>",
        '\n{"name": "read_file", ',
        '"arguments": {"path": "README.md"}}',
        "\n</tool_call>",
    ]
    words = ["Sure", ",", " I", " will", " read", " the", " two", " files", " first", "."]
    prose = [words[i % len(words)] for i in range(max(count - len(calls), 1))]
    return prose + calls


def sse_chunks(pieces: list[str]) -> list[bytes]:
    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    first = frame({"role": "assistant", "content": pieces[0]})
    return [
        first,
        *(frame({"content": p}) for p in pieces[1:]),
        frame({}, "stop"),
        b"data: [DONE]\n\n",
    ]


# --- the upstream, run as a process of its own (--serve-upstream) --------------------------


def serve_upstream(port: int, count: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    chunks = sse_chunks(reply_pieces(count))

    async def chat(request: Request) -> Response:
        pace = float(request.headers.get("x-pace", "0"))

        async def body():  # type: ignore[no-untyped-def]
            for piece in chunks:
                yield piece
                if pace:
                    await asyncio.sleep(pace)

        return StreamingResponse(body(), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# --- processes --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(command: list[str], port: int) -> subprocess.Popen[bytes]:
    import httpx

    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"did not start: {command}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from ``/proc/PID/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the client -------------------------------------------------------------------------


UNKNOWN_MODEL = "bench-unknown-model"
_model = MODEL  # the model name the client asks for (--unparsed: UNKNOWN_MODEL)


async def one_stream(client: Any, url: str, pace: float) -> tuple[float, int]:
    """Time to the first body byte, and the data events received."""
    body = {"model": _model, "messages": [{"role": "user", "content": "Go."}], "stream": True}
    body["tools"] = [READ_FILE]
    began = time.perf_counter()
    first = 0.0
    events = 0
    async with client.stream(
        "POST", url + "/chat/completions", json=body, headers={"x-pace": str(pace)}
    ) as answer:
        async for piece in answer.aiter_raw():
            if not first:
                first = time.perf_counter() - began
            events += piece.count(b"data:")
    return first, events


async def streams(url: str, count: int, pace: float) -> list[tuple[float, int]]:
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        return list(await asyncio.gather(*(one_stream(client, url, pace) for _ in range(count))))


def cpu_per_chunk(pid: int, url: str, count: int, chunks: int, pace: float) -> float:
    """Microseconds of the proxy's CPU per upstream chunk, over ``count`` concurrent streams."""
    before = cpu_seconds(pid)
    asyncio.run(streams(url, count, pace))
    return (cpu_seconds(pid) - before) / (count * chunks) * 1e6


def first_byte(url: str, requests: int) -> float:
    """Median milliseconds to the first body byte, one request at a time."""

    async def run() -> list[float]:
        import httpx

        async with httpx.AsyncClient(timeout=600) as client:
            return [(await one_stream(client, url, 0))[0] for _ in range(requests)]

    return statistics.median(asyncio.run(run())) * 1e3


def chunks_per_second(url: str, count: int, chunks: int) -> float:
    began = time.perf_counter()
    asyncio.run(streams(url, count, 0))
    return count * chunks / (time.perf_counter() - began)


# --- in process -------------------------------------------------------------------------


def best(function: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.process_time()
        function()
        times.append(time.process_time() - began)
    return min(times)


def rewriter_per_chunk(chunks: list[bytes], repeat: int) -> float:
    from stream_parser.serve.rewrite import ChatRewriter
    from stream_parser.serve.settings import ProxySettings

    body = {"model": MODEL, "messages": [], "stream": True, "tools": [READ_FILE]}
    settings = ProxySettings(dialect="hermes")

    def run() -> None:
        rewriter = ChatRewriter(body, settings)
        for piece in chunks:
            rewriter.feed(piece)
        rewriter.close()

    return best(run, repeat) / len(chunks) * 1e6


def tool_list(count: int, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{tag}_{i}",
                "description": f"Tool {i}: does one thing with its arguments.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "a file"},
                        "limit": {"type": "integer", "minimum": 1},
                        "mode": {"enum": ["fast", "slow"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["path"],
                },
            },
        }
        for i in range(count)
    ]


def tools_cost(count: int, repeat: int) -> tuple[float, float]:
    """Milliseconds to make a rewriter for a request with a new tool list, and a cached one."""
    from stream_parser.serve.rewrite import ChatRewriter, RegistryCache
    from stream_parser.serve.settings import ProxySettings

    settings = ProxySettings(dialect="hermes")
    cache = RegistryCache()
    fresh = []
    for run in range(repeat):
        body = {"model": MODEL, "messages": [], "stream": True, "tools": tool_list(count, str(run))}
        began = time.process_time()
        ChatRewriter(body, settings, cache)
        fresh.append(time.process_time() - began)
    body = {"model": MODEL, "messages": [], "stream": True, "tools": tool_list(count, "0")}
    cached = best(lambda: ChatRewriter(body, settings, cache), repeat)
    return min(fresh) * 1e3, cached * 1e3


# --- the run ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """Print the figures (``argv``: the command line's arguments, by default ``sys.argv``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000, help="chunks per reply")
    parser.add_argument("--runs", type=int, default=5, help="runs of the CPU measure")
    parser.add_argument("--streams", type=int, default=20, help="concurrent streams (CPU)")
    parser.add_argument("--pace", type=float, default=0.002, help="upstream seconds per chunk")
    parser.add_argument("--requests", type=int, default=30, help="requests (first byte)")
    parser.add_argument(
        "--concurrency", default="1,50,200", help="concurrent streams of the rate table"
    )
    parser.add_argument(
        "--unparsed", action="store_true", help="ask for a model no dialect knows (relayed)"
    )
    parser.add_argument("--serve-upstream", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_upstream:
        serve_upstream(args.serve_upstream, args.chunks)
        return
    global _model
    _model = UNKNOWN_MODEL if args.unparsed else MODEL
    dialect = "auto" if args.unparsed else "hermes"

    concurrency = [int(n) for n in args.concurrency.split(",") if n.strip()]
    chunks = len(sse_chunks(reply_pieces(args.chunks))) - 1  # the [DONE] line aside
    ports = {name: free_port() for name in ("upstream", "proxy", "bare")}
    upstream_url = f"http://127.0.0.1:{ports['upstream']}/v1"
    python = sys.executable
    processes = {
        "upstream": start(
            [python, __file__, "--serve-upstream", str(ports["upstream"]), "--chunks",
             str(args.chunks)],
            ports["upstream"],
        ),
        "proxy": start(
            [python, "-m", "stream_parser", "serve", "--upstream", upstream_url,
             "--port", str(ports["proxy"]), "--dialect", dialect, "--log-level", "warning"],
            ports["proxy"],
        ),
        "bare": start(
            [python, str(ROOT / "benchmarks" / "passthrough_proxy.py"), "--upstream",
             upstream_url, "--port", str(ports["bare"])],
            ports["bare"],
        ),
    }  # fmt: skip
    urls = {name: f"http://127.0.0.1:{port}/v1" for name, port in ports.items()}
    try:
        for name in ("proxy", "bare"):  # warm up: connections, first imports
            asyncio.run(streams(urls[name], 4, 0))
        cpu: dict[str, list[float]] = {"proxy": [], "bare": []}
        for _ in range(args.runs):
            for name in ("proxy", "bare"):
                pid = processes[name].pid
                cpu[name].append(cpu_per_chunk(pid, urls[name], args.streams, chunks, args.pace))
        ratios = [
            p / b if b else float("nan") for p, b in zip(cpu["proxy"], cpu["bare"], strict=True)
        ]
        ttfb = {name: first_byte(urls[name], args.requests) for name in urls}
        rates = {
            (name, n): chunks_per_second(urls[name], n, chunks)
            for n in concurrency
            for name in ("proxy", "bare")
        }
    finally:
        for process in processes.values():
            process.terminate()
            process.wait(10)
    if not args.unparsed:
        inner = rewriter_per_chunk(sse_chunks(reply_pieces(args.chunks)), args.runs)
        new_tools, cached_tools = tools_cost(50, args.runs)

    med = statistics.median
    what = "relaying an unknown model unparsed" if args.unparsed else "parsing (hermes)"
    print(f"{chunks} chunks a reply, the proxy {what}; CPU over {args.streams} streams")
    print("| figure | stream-parser serve | pass-through | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(
        f"| CPU per chunk, µs (median of {args.runs}) | {med(cpu['proxy']):.1f} "
        f"| {med(cpu['bare']):.1f} | {med(ratios):.2f}x |"
    )
    if not args.unparsed:
        print(f"| parser + encoder per chunk, µs (in process) | {inner:.1f} | | |")
    direct = ttfb["upstream"]
    print(
        f"| time to first byte added, ms (direct {direct:.2f}) "
        f"| {ttfb['proxy'] - direct:.2f} | {ttfb['bare'] - direct:.2f} "
        f"| {ttfb['proxy'] - ttfb['bare']:+.2f} ms |"
    )
    for n in concurrency:
        p, b = rates[("proxy", n)], rates[("bare", n)]
        print(f"| chunks per second, {n} streams, 1 worker | {p:,.0f} | {b:,.0f} | {p / b:.2f}x |")
    if not args.unparsed:
        print(f"| 50 tools: new list / cached, ms | {new_tools:.1f} / {cached_tools:.3f} | | |")


if __name__ == "__main__":
    main()
