"""pytest set-up for the benchmarks: make the repository root importable.

``benchmarks/`` is not a package and not in ``testpaths``: its cases run only on demand,
``python -m pytest benchmarks --benchmark-enable`` (``tox -e bench``).
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
