"""Which dialect names exist, known before any dialect is loaded (kept for older imports).

The names, their modules and their model-name patterns now live in the dialect registry
(:mod:`~stream_parser.core.dialect_registry`), which knows the built-in dialects before
any of them is loaded; this module re-exports what it used to define.
"""

from __future__ import annotations

from .dialect_registry import BUILTIN_DIALECTS, check_dialect_names, dialect_names, load_dialects

__all__ = ["BUILTIN_DIALECTS", "check_dialect_names", "dialect_names", "load_dialects"]
