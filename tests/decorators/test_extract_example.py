"""The typed extraction example runs as shipped and prints the validated invoice."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extract.py"


def test_the_example_extracts_the_invoice(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("extract_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered, as a script's __main__ is: Pydantic resolves the models' names there.
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    assert module.main([]) == 0
    out = capsys.readouterr().out
    body, _, footer = out.rpartition("}\n")
    invoice = json.loads(body + "}")
    assert invoice["number"] == "INV-2024-117"
    assert invoice["date"] == "2024-05-03"
    assert [item["quantity"] for item in invoice["items"]] == [12, 2]
    assert footer.startswith("total: 176.50")


def test_the_example_reports_an_unreachable_server_in_one_line() -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--base-url", url, "--max-retries", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"extract.py: error: the model server at {url} failed: ")
    assert "check --base-url" in result.stderr
    assert result.stdout == ""
