r"""The JSON form of events: written from any event, read back by its ``kind``.

Theory of operation.  Every event is a frozen dataclass with a ``kind``.  Its JSON form
is an object with one member per compared field, ``kind`` included, written on one line
without spaces; :meth:`~stream_parser.core.events.Event.model_dump` gives it as a
``dict`` and :meth:`~stream_parser.core.events.Event.model_dump_json` as text (the
encoders' :func:`~stream_parser.encoders.event_to_json` is the same text).

* a Pydantic model (a tool call's ``tool_instance``) becomes its fields; other
  dataclasses (a ``ToolResult``) their compared fields; a tuple a list;
* any other value is written as Pydantic writes it in JSON mode; a float that is not
  finite becomes ``null``, and a value that cannot be written at all becomes its
  ``repr``: writing never raises for an event, whatever it holds;
* a value that holds itself, or nests deeper than the JSON's 100th level (the event's
  object is the first), is written up to there, and a placeholder stands for the rest,
  as Python's ``repr`` writes it: ``"{...}"``, ``"[...]"``, ``"Name(...)"``;
* text is written verbatim (UTF-8), except for a lone surrogate, which JSON can only
  hold as a ``\uXXXX`` escape, and a surrogate pair held as two code units, which is
  written as the one character it stands for.

Reading goes by ``kind``, in :meth:`~stream_parser.core.events.Event.model_validate`:
the class that ``kind`` names validates the object (with Pydantic, by a validator made
on first use, so importing the package builds none); a class of a floor above (the
agent's events) overrides how, so the core never learns of those floors.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Final

from pydantic_core import to_jsonable_python

__all__ = ["dump", "dump_json", "to_json_text"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")

# How deep an event's JSON nests at most, its own object the first level: deeper values are
# written as a placeholder.  Far beyond real data, and far below Python's recursion limit
# (1000 by default), which writing and reading the text back both stay under.
_MAX_LEVELS: Final = 100


def dump(event: Any) -> dict[str, Any]:
    """The JSON form of ``event`` as JSON-able data (a ``dict``)."""
    obj = _jsonable(event, 1, set())
    return obj if isinstance(obj, dict) else {"value": obj}


def dump_json(event: Any) -> str:
    """The JSON form of ``event`` as one line of text."""
    return to_json_text(_jsonable(event, 1, set()))


def to_json_text(obj: Any) -> str:
    """JSON-able data as one line of text, surrogates written as described above."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if _SURROGATE.search(text) is None:
        return text
    # Surrogate code units only occur inside JSON strings.  A pair becomes the character
    # it stands for (what any JSON reader makes of it), and a lone one an escape: JSON
    # text cannot hold it raw, and a reader gives the lone code unit back.
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _jsonable(value: Any, level: int, path: set[int]) -> Any:
    """``value`` as JSON-able data: dicts with str keys, lists, str, int, float, bool, None.

    Events and other dataclasses (such as a ToolResult) give their compared fields: the
    ones left out of comparison are Python objects kept beside the value, not part of it.

    Args:
        value: the value to write.
        level: how many containers deep ``value`` sits in the JSON text (the event's own
            object is at level 1).
        path: the ``id`` of each container being written around ``value``: one met again
            holds itself.
    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if value - value == 0 else None  # inf and nan: not JSON
    # A cycle would never end, and a value nested deep enough would reach Python's
    # recursion limit (here or in json.dumps): both end in a placeholder, as Python's repr
    # writes them.  A tuple stays out of the path: it can only hold itself through a
    # mutable value, which is in it.  Loops, not comprehensions, keep one Python frame per
    # level on every supported Python.
    if isinstance(value, dict):
        if level > _MAX_LEVELS or id(value) in path:
            return "{...}"
        path.add(id(value))
        written: dict[str, Any] = {}
        for key, item in value.items():
            written[_key(key)] = _jsonable(item, level + 1, path)
        path.discard(id(value))
        return written
    if isinstance(value, tuple):
        if level > _MAX_LEVELS:
            return "[...]"
        items: list[Any] = []
        for item in value:
            items.append(_jsonable(item, level + 1, path))
        return items
    if isinstance(value, list):
        if level > _MAX_LEVELS or id(value) in path:
            return "[...]"
        path.add(id(value))
        items = []
        for item in value:
            items.append(_jsonable(item, level + 1, path))
        path.discard(id(value))
        return items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Even a frozen dataclass can be made to hold itself (object.__setattr__).
        if level > _MAX_LEVELS or id(value) in path:
            return f"{type(value).__name__}(...)"
        path.add(id(value))
        fields: dict[str, Any] = {}
        for field in dataclasses.fields(value):
            if field.compare:
                fields[field.name] = _jsonable(getattr(value, field.name), level + 1, path)
        path.discard(id(value))
        return fields
    try:
        converted = to_jsonable_python(value, fallback=_unwritable)
    except Exception:  # a value Pydantic cannot write (a broken model, bad bytes...)
        return _unwritable(value)
    return _jsonable(converted, level, path)


def _key(key: Any) -> str:
    """A dict key as JSON writes it: keys are strings there."""
    if isinstance(key, str):
        return key
    if isinstance(key, float) and key - key != 0:
        return "null"  # inf and nan: not JSON, written as a value would be
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    return _unwritable(key)


def _unwritable(value: Any) -> str:
    """What stands for a value that has no JSON form: its repr."""
    try:
        return repr(value)
    except Exception:  # a broken __repr__: still never raise
        return f"<{type(value).__name__}>"
