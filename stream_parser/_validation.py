"""Pydantic validation errors in a form that is safe to put in events and JSON."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

__all__ = ["json_safe_errors"]


def json_safe_errors(exc: ValidationError) -> tuple[dict[str, Any], ...]:
    """Pydantic's errors as plain, JSON-serialisable dicts.

    ``exc.json()`` cannot encode every string a model may send (a lone surrogate makes it
    raise), and ``exc.errors()`` may hold exception objects in ``ctx``.  This goes through
    Python's ``json`` module, which escapes any string and turns odd objects into their
    ``str``, so that building an error event never raises (invariant 6).
    """
    errors = exc.errors(include_url=False)
    return tuple(json.loads(json.dumps(errors, default=str)))
