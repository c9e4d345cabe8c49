"""The checks every family with rendered fixtures passes, written once: :class:`FamilyChecks`.

A family whose fixture replies are rendered from its chat template
(``tests/fixtures/dialects/<name>/render.py`` writes its ``cases.json``) is checked the
same way as every other:

* each fixture case is read by ``check_dialect``: whole, one character at a time, split
  at every position and as tokens (a test a case, named after it);
* ``cases.json`` is byte for byte what its render script writes, with enough cases
  rendered from a template (named ``template_…``) and enough from trackers (their
  source names the issue, ``#…``);
* ``dialect_for_model`` maps the family's model names as its table says, and leaves the
  names it lists as others' alone;
* the usage instructions show the format: its example call, and its opener named in
  the first paragraph, in English and in Chinese;
* a call the family's writer writes reads back as exactly that call, whatever the
  arguments, whole, one character at a time and split in two.

A family's test module declares one subclass, ``Test<Family>``, holding only what is
its own (its dialect, render module, tools, names table, usage example and, where its
replies need more than a line of prose before the call, its writer strategy
:meth:`FamilyChecks.replies`), and keeps its special cases as plain tests beside it.
pytest collects the subclass; this base class is not collected (its name does not
start with ``Test``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import ModelDialect, dialect_for_model, get_dialect
from stream_parser.testing import check_dialect
from stream_parser.testing.dialects import load_cases
from tests.dialects.support import FAMILY_TOOLS
from tests.fixtures.dialects.rendered import stale

THINK = ("<think>", "</think>")
"""The usual reasoning tags, as ``ModelDialect.reasoning`` gives them."""

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


class FamilyChecks:
    """The shared checks; a subclass names the family and what is its own.

    Attributes:
        dialect: the dialect's name, as ``ParserConfig(dialect=...)`` takes it.
        render: the family's ``tests.fixtures.dialects.<name>.render`` module.
        tools: the tools its fixture cases call.
        templates: how many cases at least are rendered from a template.
        trackers: how many cases at least come from a tracker (their source names it).
        names: model name -> what ``dialect_for_model`` finds for it (None: no dialect).
        others: model names it must not map to this dialect (another may read them).
        usage: the example call the usage instructions show, and the text their first
            paragraph names (the format's opener).
        prefilled_reasoning: the writer's replies are read as starting inside reasoning
            (``start_in_thinking``: the template opens it).
        refuses_values: the writer refuses some values it cannot write so that they read
            back (``ValueError``); those arguments are passed over here (the family's
            own tests say which are refused).
    """

    dialect: ClassVar[str]
    render: ClassVar[ModuleType]
    tools: ClassVar[Mapping[str, type[BaseModel]]] = FAMILY_TOOLS
    templates: ClassVar[int] = 1
    trackers: ClassVar[int] = 3
    names: ClassVar[Sequence[tuple[str, ModelDialect | None]]] = ()
    others: ClassVar[Sequence[str]] = ()
    usage: ClassVar[tuple[str, str]]
    prefilled_reasoning: ClassVar[bool] = False
    refuses_values: ClassVar[bool] = False

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        """Whole replies in which the family's writer writes the one call ``tool(args)``.

        Each must read back as exactly that call. By default: a line of prose, then the
        call as ``format_call`` writes it; a family overrides this where its replies
        frame a call otherwise, or where it has more than one writer.
        """
        return ["Looking.\n" + get_dialect(self.dialect).format_call(tool, args)]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One test a fixture case and one a model name, each named after it."""
        if "case" in metafunc.fixturenames:
            cases = self._cases()
            metafunc.parametrize("case", cases, ids=[str(c["name"]) for c in cases])
        if "model_name" in metafunc.fixturenames:
            metafunc.parametrize("model_name", [*(name for name, _ in self.names), *self.others])

    def _cases(self) -> list[dict[str, Any]]:
        return load_cases(self.render.HERE / "cases.json")

    def test_fixture_cases(self, case: dict[str, Any]) -> None:
        assert case["source"]
        check_dialect(self.dialect, [case], tools=self.tools)

    def test_the_fixtures_are_what_the_templates_render(self) -> None:
        assert stale(self.render.HERE, self.render.ABOUT, self.render.cases()) == []
        cases = self._cases()
        assert sum(c["name"].startswith("template_") for c in cases) >= self.templates
        assert sum("#" in c["source"] for c in cases) >= self.trackers

    def test_model_names(self, model_name: str) -> None:
        found = dialect_for_model(model_name)
        expected = dict(self.names)
        if model_name in expected:
            assert found == expected[model_name]
        else:
            assert found is None or found.dialect != self.dialect

    def test_usage_instructions_show_the_format(self) -> None:
        example, opener = self.usage
        for language in ("en", "zh"):
            text = get_dialect(self.dialect).usage_instructions(
                "read_file", {"path": "a.py"}, language=language
            )
            assert example in text
            assert opener in text.split("\n\n")[0]

    def test_format_call_round_trips(self) -> None:
        # The property runs inside the method so that each family's class runs a
        # function of its own (hypothesis checks that one @given test has one executor).
        @settings(max_examples=40, deadline=None)
        @given(
            query=_TEXT,
            tags=st.lists(_TEXT, max_size=3),
            max_results=st.integers(),
            data=st.data(),
        )
        def round_trip(query: str, tags: list[str], max_results: int, data: st.DataObject) -> None:
            args = {"query": query, "tags": tags, "max_results": max_results}
            try:
                replies = self.replies("search", args)
            except ValueError:
                if not self.refuses_values:
                    raise
                return
            for reply in replies:
                cut = data.draw(st.integers(min_value=0, max_value=len(reply)))
                for pieces in ([reply], list(reply), [reply[:cut], reply[cut:]]):
                    assert self._calls(pieces) == [("search", args)], pieces

        round_trip()

    def _calls(self, pieces: list[str]) -> list[tuple[str, dict[str, Any]]]:
        # None, as when unset, leaves where a reply starts to the dialect.
        config = ParserConfig(
            dialect=self.dialect, start_in_thinking=True if self.prefilled_reasoning else None
        )
        parser = StreamToolParser(dict(self.tools), config=config)
        events = [e for piece in pieces for e in parser.feed(piece)] + parser.close()
        return [
            (e.tool_name, e.tool_instance.model_dump())
            for e in events
            if isinstance(e, ToolCallEvent)
        ]
