"""mypyc's class options, usable whether or not the core is compiled.

The optional compiled build turns the parser into a native class.  A native class can be
subclassed by ordinary Python classes only when it says so, and users subclass
:class:`~stream_parser.core.parser.StreamToolParser`.  mypyc reads
``mypy_extensions.mypyc_attr`` when it compiles; at run time the pure-Python package does
not need ``mypy_extensions``, so without it the decorator does nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr
else:
    try:
        from mypy_extensions import mypyc_attr
    except ImportError:  # the pure-Python package runs without it

        def mypyc_attr(*_args: object, **_kwargs: object):
            return lambda cls: cls


__all__ = ["mypyc_attr"]
