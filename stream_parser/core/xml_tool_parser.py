"""XMLToolParser: the argument converter, plus whole tool calls parsed by the core.

:class:`~stream_parser.core.xml_tools.XMLArgumentConverter` turns a closed block's raw
parameters into a model and writes models back as XML; the streaming parser uses it
and so it must not use the parser.  The two conveniences here take a whole
``<tool>...</tool>`` text and run a :class:`~stream_parser.core.parser.StreamToolParser`
over it, so that their answer is exactly the streaming parser's; they live one floor
above the parser for that reason.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping

from pydantic import BaseModel

from ..schema.validation import ToolBuildResult
from .events import ToolCallEvent
from .parser import StreamToolParser
from .xml_tools import XMLArgumentConverter

__all__ = ["XMLToolParser"]


class XMLToolParser(XMLArgumentConverter):
    """Converts tool parameters to models and back, and parses whole tool calls.

    Everything of :class:`~stream_parser.core.xml_tools.XMLArgumentConverter` (same
    arguments and errors), plus :meth:`parse_tool_xml` and :meth:`extract_parameters`.

    Example:
        >>> from pydantic import BaseModel
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> xml_parser = XMLToolParser({"read_file": ReadFile})
        >>> xml_parser.parse_tool_xml("<read_file><path>a.py</path></read_file>", "read_file")
        ReadFile(path='a.py')
        >>> xml_parser.extract_parameters("<read_file><path> a.py</path></read_file>", "read_file")
        {'path': ' a.py'}
    """

    _whole_call_off: bool = False
    """Set on the copy that the built-in methods parse with (see ``_tables._whole_call``)."""

    def parse_tool_xml(self, xml_content: str, tool_name: str) -> BaseModel | None:
        """Parse one complete tool call, ``<tool>...</tool>``, into its model instance.

        Runs a :class:`~stream_parser.core.parser.StreamToolParser` over ``xml_content``
        with this converter, so the result is exactly what the streaming parser would
        produce for the same text.

        Args:
            xml_content: the whole tool XML, start and end tags included.
            tool_name: the tool expected.

        Returns:
            The validated instance of the first ``tool_name`` call in the text, or None
            when there is none or it is invalid.
        """
        # Deltas are not needed; strict mode would raise; a stream that starts inside
        # thinking would hide the call.  Everything else is kept, raw_params included.
        config = dataclasses.replace(
            self.config, emit_deltas=False, strict=False, start_in_thinking=False
        )
        # A subclass that overrides this method and calls it (super()) would be called
        # back by the parser below: that parser builds models the built-in way.
        converter = copy.copy(self)
        converter._whole_call_off = True
        parser = StreamToolParser(self.tool_registry, config=config, xml_parser=converter)
        for event in [*parser.feed(xml_content), *parser.close()]:
            if isinstance(event, ToolCallEvent) and event.tool_name == tool_name:
                instance = event.tool_instance
                return instance if isinstance(instance, BaseModel) else None
        return None

    def extract_parameters(self, xml_content: str, tool_name: str) -> dict[str, str]:
        """Split one complete tool call into its raw parameter strings (rule 5).

        Args:
            xml_content: the whole tool XML, start and end tags included.
            tool_name: the tool expected.

        Returns:
            XML parameter name -> raw value text (before whitespace rules, CDATA
            unwrapping and conversion) of the first complete ``tool_name`` call, exactly
            as the streaming parser collects it; unknown parameters are left out.  Empty
            when there is no complete call (unclosed or malformed).
        """
        captured: dict[str, str] = {}

        def capture(name: str, raw_params: Mapping[str, str]) -> ToolBuildResult:
            if name == tool_name and not captured:
                captured.update(raw_params)
            return XMLArgumentConverter.build_instance(self, name, raw_params)

        # A shallow copy shares the compiled specs; only its build_instance records.
        recorder = copy.copy(self)
        recorder.build_instance = capture  # type: ignore[method-assign,assignment]
        recorder._whole_call_off = True  # a parse_tool_xml of a subclass would skip capture
        config = dataclasses.replace(
            self.config, emit_deltas=False, strict=False, start_in_thinking=False
        )
        parser = StreamToolParser(self.tool_registry, config=config, xml_parser=recorder)
        parser.feed(xml_content)
        parser.close()
        return captured
