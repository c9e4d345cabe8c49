"""The render scripts' shared tail: ``cases.json`` written, and checked case by case."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dialects.templates import cases_json
from tests.fixtures.dialects.rendered import main, stale

ABOUT = "Replies in a made-up format."
CASES: list[dict[str, Any]] = [
    {"name": "one", "source": "here", "text": "a", "calls": []},
    {"name": "two", "source": "here", "text": "b", "calls": []},
]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "made_up"
    folder.mkdir()
    return folder


def test_main_writes_the_file_then_check_finds_it_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    here = _folder(tmp_path)
    assert main(here, ABOUT, lambda: CASES, []) == 0
    assert (here / "cases.json").read_text(encoding="utf-8") == cases_json(ABOUT, CASES)
    assert "(2 cases)" in capsys.readouterr().out
    assert main(here, ABOUT, lambda: CASES, ["--check"]) == 0
    assert stale(here, ABOUT, CASES) == []


def test_check_writes_nothing_and_names_what_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    here = _folder(tmp_path)
    assert main(here, ABOUT, lambda: CASES, ["--check"]) == 1
    assert not (here / "cases.json").exists()
    assert "does not exist" in capsys.readouterr().err
    main(here, ABOUT, lambda: CASES, [])
    changed = [{**CASES[0], "text": "c"}, {"name": "three", "source": "", "text": "", "calls": []}]
    assert main(here, "Other.", lambda: changed, ["--check"]) == 1
    err = capsys.readouterr().err
    for line in (
        "the about text differs",
        "case 'three' is new",
        "case 'two' is gone",
        "case 'one' differs",
        "is stale: run python -m tests.fixtures.dialects.made_up.render",
    ):
        assert line in err
    assert (here / "cases.json").read_text(encoding="utf-8") == cases_json(ABOUT, CASES)


_SAME = "the same cases, in another order or layout"


@pytest.mark.parametrize(
    ("written", "difference"),
    [
        (cases_json(ABOUT, CASES[::-1]), _SAME),
        (json.dumps({"about": ABOUT, "cases": CASES}), _SAME),
        ("{", "is not JSON"),
    ],
)
def test_stale_tells_order_layout_and_broken_files(
    tmp_path: Path, written: str, difference: str
) -> None:
    here = _folder(tmp_path)
    (here / "cases.json").write_text(written, encoding="utf-8")
    [found] = stale(here, ABOUT, CASES)
    assert difference in found


def test_a_render_script_checks_its_own_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A family's script as ``python -m tests.fixtures.dialects.longcat.render --check``
    # runs it: its tail hands its folder, about text and cases to ``main``.
    script = "tests.fixtures.dialects.longcat.render"
    monkeypatch.delitem(sys.modules, script, raising=False)  # run afresh, as -m does
    monkeypatch.setattr(sys, "argv", [script, "--check"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(script, run_name="__main__")
    assert exited.value.code == 0
    assert "longcat/cases.json is current" in capsys.readouterr().out
