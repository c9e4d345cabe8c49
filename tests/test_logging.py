"""Without logging configured, the library prints nothing, also for the errors it raises.

A library logs and the application decides where to: the ``stream_parser`` logger has a
``NullHandler``, so no record reaches Python's last-resort handler (which writes
WARNING and above to stderr).  And an error the caller is given (raised, or delivered
as the reply's last delta) is logged below WARNING: the caller handles it, and a
program that shows warnings should not show it twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter: pytest configures logging, a user's script does not.  Each
# case runs with sys.stderr swapped for a buffer (the last-resort handler and warnings
# look it up when they write), so a failure names the case that printed.
_SCRIPT = textwrap.dedent(
    '''
    import contextlib
    import io
    import json
    import sys

    from pydantic import BaseModel

    from stream_parser import (
        AnswerValidationError,
        FunctionCallAgent,
        ModelError,
        ReActAgent,
        RunLimitError,
        llm_chat,
        llm_function,
        tool,
    )
    from stream_parser.testing import NativeCall, ScriptedModel, ScriptedReply


    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


    class Point(BaseModel):
        x: int
        y: int


    XML_CALL = "<add><a>1</a><b>2</b></add>"
    NATIVE_CALL = [NativeCall("add", {"a": 1, "b": 2})]
    CUT = ScriptedReply(content="Let me", error="connection reset by peer")


    def react(*replies, **options):
        return ReActAgent(ScriptedModel(list(replies)), [add], **options).run_sync("hi")


    def native(*replies, **options):
        return FunctionCallAgent(ScriptedModel(list(replies)), [add], **options).run_sync("hi")


    def function(*replies, **options):
        @llm_function(ScriptedModel(list(replies)), toolkit=[add], **options)
        def locate(text: str) -> Point:
            """Where the text says the point is."""

        return locate("one, two")


    def chat(*replies, **options):
        @llm_chat(ScriptedModel(list(replies)), toolkit=[add], **options)
        def reply(message: str, history: list) -> str:
            """Answer briefly."""

        return list(reply.sync("hi", history=[]))


    CASES = {
        "react model error": (lambda: react(ModelError("boom", status_code=503)), ModelError),
        "react reply cut": (lambda: react(CUT), ModelError),
        "react run limit": (lambda: react(XML_CALL, max_iterations=1), None),
        "native model error": (lambda: native(ModelError("boom", status_code=503)), ModelError),
        "native reply cut": (lambda: native(CUT), ModelError),
        "native run limit": (lambda: native(NATIVE_CALL, max_iterations=1), None),
        "function model error": (lambda: function(ModelError("boom")), ModelError),
        "function reply cut": (lambda: function(CUT), ModelError),
        "function run limit": (lambda: function(NATIVE_CALL, max_iterations=1), RunLimitError),
        "function invalid answer": (
            lambda: function("no point here", retry_times=0),
            AnswerValidationError,
        ),
        "chat model error": (lambda: chat(ModelError("boom", status_code=429)), ModelError),
        "chat reply cut": (lambda: chat(CUT), ModelError),
    }

    report = {}
    for name, (case, expected) in CASES.items():
        printed = io.StringIO()
        raised = None
        with contextlib.redirect_stderr(printed):
            try:
                case()
            except Exception as exc:
                raised = type(exc).__name__
                if expected is None or not isinstance(exc, expected):
                    raise
        report[name] = {"raised": raised, "stderr": printed.getvalue()}
    print(json.dumps(report))
    '''
)


def test_raised_errors_print_nothing_without_logging_configured() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    report = json.loads(result.stdout)
    assert len(report) == 12
    printed = {name: case["stderr"] for name, case in report.items() if case["stderr"]}
    assert printed == {}
    # The errors were raised (the cases check their types), not swallowed.
    assert report["react model error"]["raised"] == "ModelError"
    assert report["function run limit"]["raised"] == "RunLimitError"
    assert report["function invalid answer"]["raised"] == "AnswerValidationError"
    assert report["react run limit"]["raised"] is None


def test_the_package_logger_has_the_only_null_handler() -> None:
    import logging

    import stream_parser  # noqa: F401  # importing it installs the handler

    handlers = logging.getLogger("stream_parser").handlers
    assert sum(isinstance(h, logging.NullHandler) for h in handlers) == 1
    for name in ("stream_parser.llm", "stream_parser.agent", "stream_parser.decorators"):
        assert not any(
            isinstance(h, logging.NullHandler) for h in logging.getLogger(name).handlers
        ), name
