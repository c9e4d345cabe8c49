"""How the demo shows a run: plain text, colours with ``rich``, or JSON lines."""

from __future__ import annotations

import importlib
from typing import Any, TextIO

from ..agent import Usage
from ..core.events import Event, ToolCallEvent
from ..encoders.json import event_to_json

__all__ = ["LABELS", "JsonRenderer", "Renderer", "make_renderer"]

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "title": "stream-parser demo",
        "model": "model",
        "protocol": "protocol",
        "sandbox": "sandbox",
        "task": "task",
        "step": "step",
        "call": "call",
        "result": "result",
        "error": "error",
        "approval": "approval",
        "approved": "approved automatically (demo)",
        "ended": "the run ended: {how}",
        "done": "the model answered",
        "length": "the answer was cut: the reply reached its token limit",
        "length_limit": "the answer was cut at --max-tokens {n}; raise it for a longer answer",
        "max_iterations": "the run reached its step limit",
        "max_tool_calls": "the run reached its tool-call limit",
        "notice": "notice",
        "usage": "usage",
        "tokens": "input {i} · output {o} (reasoning {r}) tokens · {s} steps · {reason}",
    },
    "zh": {
        "title": "stream-parser 演示",
        "model": "模型",
        "protocol": "协议",
        "sandbox": "沙盒",
        "task": "任务",
        "step": "第 {n} 步",
        "call": "调用",
        "result": "结果",
        "error": "错误",
        "approval": "审批",
        "approved": "已自动批准（演示）",
        "ended": "运行结束：{how}",
        "done": "模型已回答",
        "length": "回答被截断：回复达到了词元上限",
        "length_limit": "回答在 --max-tokens {n} 处被截断；调大它可得到更长的回答",
        "max_iterations": "运行达到了步数上限",
        "max_tool_calls": "运行达到了工具调用次数上限",
        "notice": "提示",
        "usage": "用量",
        "tokens": "输入 {i} · 输出 {o}（推理 {r}）词元 · {s} 步 · {reason}",
    },
}


class Renderer:
    """Writes a run for a person: thinking dimmed, text as it streams, calls filling in.

    Without ``rich`` it writes plain text to ``out``; with a ``rich`` console it adds
    styles.  Each piece is written as soon as its event arrives.
    """

    def __init__(self, out: TextIO, language: str, console: Any = None) -> None:
        self._out = out
        self._labels = LABELS[language]
        self._console = console
        self._param: str | None = None
        # Dialects put a value on the line after its tag: skip that newline when showing it.
        self._value_started = False
        self._at_line_start = True

    # -- low-level writing -------------------------------------------------------------------

    def _write(self, text: str, style: str = "") -> None:
        if not text:
            return
        if self._console is not None:
            self._console.print(text, style=style or None, end="", markup=False, highlight=False)
        else:
            self._out.write(text)
            self._out.flush()
        self._at_line_start = text.endswith("\n")

    def _end_line(self) -> None:
        """End the current line unless it is empty."""
        if not self._at_line_start:
            self._write("\n")

    def _line(self, text: str = "", style: str = "") -> None:
        self._end_line()
        self._write(text + "\n", style)

    # -- the run -----------------------------------------------------------------------------

    def header(self, fields: dict[str, str]) -> None:
        """The demo's title and what it runs on."""
        self._line(f"== {self._labels['title']} ==", "bold")
        for key, value in fields.items():
            self._line(f"{self._labels[key]}: {value}", "cyan")

    def approval(self, call: ToolCallEvent) -> None:
        """Show that a call needing approval was approved."""
        args = ", ".join(f"{k}={v!r}" for k, v in _args(call).items() if k != "content")
        self._line(
            f"? {self._labels['approval']}: {call.tool_name}({args}) -> {self._labels['approved']}",
            "yellow",
        )

    def event(self, event: Event) -> None:
        """Show one event of the run."""
        kind = event.kind
        e: Any = event
        if kind == "step_start":
            step = self._labels["step"]
            heading = step.format(n=e.step) if "{n}" in step else f"{step} {e.step}"
            self._line()
            self._line(f"--- {heading} ---", "bold blue")
        elif kind == "thinking_delta":
            self._write(e.delta, "dim italic")
        elif kind == "thinking":
            self._end_line()
        elif kind == "text":
            self._write(e.text)
        elif kind == "tool_call_start":
            self._param = None
            self._end_line()
            self._write(f"-> {self._labels['call']} {e.tool_name}", "bold magenta")
        elif kind == "tool_param_delta":
            if e.param != self._param:
                self._param = e.param
                self._end_line()
                self._value_started = False
                self._write(f"     {e.param} = ", "magenta")
            delta = e.delta if self._value_started else e.delta.lstrip("\n")
            self._value_started = self._value_started or bool(delta)
            self._write(delta, "green")
        elif kind == "tool_arguments_delta":
            if self._param is None:
                self._param = ""
                self._end_line()
                self._write("     ", "magenta")
            self._write(e.delta, "green")
        elif kind == "tool_call":
            self._line(f"   ok: {e.tool_name}({_short(_args(e))})", "magenta")
        elif kind == "tool_result":
            style = "red" if e.result.is_error else "cyan"
            self._line(f"<- {self._labels['result']} {e.tool_name}:", style)
            for row in e.result.text.splitlines() or [""]:
                self._line(f"     {row}", style)
        elif kind == "error":
            self._line(f"!  {self._labels['error']} {e.error_type}: {e.message}", "red")
        elif kind == "notice":
            self._line(f"!  {self._labels['notice']} {e.code}: {e.message}", "yellow")

    def interrupted(self) -> None:
        """End the line a failed run left open, so that its error starts a line of its own."""
        self._end_line()

    def finish(self, usage: Usage, steps: int, reason: str, *, max_tokens: int | None) -> None:
        """How the run ended and the tokens used (the answer itself has just streamed).

        Args:
            usage: the run's tokens.
            steps: the run's steps.
            reason: why it ended (``StopReason``).
            max_tokens: the ``--max-tokens`` in force, to name it when the answer was cut.
        """
        labels = self._labels
        how = labels.get(reason, reason)
        if reason == "length" and max_tokens is not None:
            how = labels["length_limit"].format(n=max_tokens)
        self._line()
        style = "bold green" if reason == "done" else "yellow"
        self._line(f"== {labels['ended'].format(how=how)} ==", style)
        tokens = self._labels["tokens"].format(
            i=usage.input_tokens,
            o=usage.output_tokens,
            r=usage.reasoning_tokens,
            s=steps,
            reason=reason,
        )
        self._line(f"{self._labels['usage']}: {tokens}", "dim")


class JsonRenderer(Renderer):
    """Writes every event as one JSON line (``--json``), nothing else."""

    def header(self, fields: dict[str, str]) -> None:
        """Nothing: the output is events only."""

    def approval(self, call: ToolCallEvent) -> None:
        """Nothing: the ``tool_result`` event follows."""

    def event(self, event: Event) -> None:
        """One JSON line."""
        self._out.write(event_to_json(event) + "\n")
        self._out.flush()

    def finish(self, usage: Usage, steps: int, reason: str, *, max_tokens: int | None) -> None:
        """Nothing: ``agent_done`` was the last line."""


def make_renderer(out: TextIO, language: str, *, json_lines: bool, plain: bool) -> Renderer:
    """The renderer for the options: JSON lines, ``rich`` if installed, else plain text."""
    if json_lines:
        return JsonRenderer(out, language)
    if not plain:
        try:
            # Imported by name: rich is an optional extra (``[cli]``), not a dependency.
            console_module = importlib.import_module("rich.console")
        except ImportError:
            pass
        else:
            # soft_wrap: the text arrives in small pieces, so leave wrapping to the terminal
            # rather than have rich break each piece on its own.
            return Renderer(out, language, console_module.Console(file=out, soft_wrap=True))
    return Renderer(out, language)


def _args(call: ToolCallEvent) -> dict[str, Any]:
    instance = call.tool_instance
    if hasattr(instance, "model_dump"):
        return dict(instance.model_dump())
    return dict(instance) if isinstance(instance, dict) else {}


def _short(args: dict[str, Any]) -> str:
    parts = []
    for key, value in args.items():
        text = repr(value)
        parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
    return ", ".join(parts)
