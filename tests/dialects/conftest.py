"""The family checks' asserts are rewritten as a test module's are, to say what differed."""

import pytest

# tests/dialects/family.py is not a test module itself: pytest rewrites its asserts only
# when told before it is imported.
pytest.register_assert_rewrite("tests.dialects.family")
