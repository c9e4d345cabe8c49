"""``python -m stream_parser``: the same as the ``stream-parser`` command."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
