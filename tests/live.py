"""The live tests' one switch: a real OpenAI-compatible server named by the environment.

Set ``STREAM_PARSER_LIVE_BASE_URL`` (e.g. ``http://127.0.0.1:8765/v1``) and
``STREAM_PARSER_LIVE_MODEL``, plus ``STREAM_PARSER_LIVE_API_KEY`` if the server needs a
key, then run ``python -m pytest -m live``. Without the first two every live test is
skipped, and says which variables to set. A live module writes
``pytestmark = live_marks()``.
"""

from __future__ import annotations

import os

import pytest

BASE_URL = os.environ.get("STREAM_PARSER_LIVE_BASE_URL")
MODEL = os.environ.get("STREAM_PARSER_LIVE_MODEL")
API_KEY = os.environ.get("STREAM_PARSER_LIVE_API_KEY")


def live_marks(timeout: int = 600) -> list[pytest.MarkDecorator]:
    """The marks of a live module: ``live``, a timeout, and skipped unless the server is set.

    A small model on a busy CPU can take minutes for a 1024-token reply, so the timeout
    (in seconds) is well above the suite's 120 s a test.
    """
    return [
        pytest.mark.live,
        pytest.mark.timeout(timeout),
        pytest.mark.skipif(
            not (BASE_URL and MODEL),
            reason="set STREAM_PARSER_LIVE_BASE_URL and STREAM_PARSER_LIVE_MODEL to run",
        ),
    ]
