r"""ECMA-262 patterns run by Python's re: the meaning of each construct, and the refusals.

The property tests compare with ``regress``, a Rust ECMA-262 engine, on patterns drawn
from the constructs the translation handles and on texts full of the characters where
ECMA-262 and Python disagree (non-ASCII digits and letters, ECMA-262's white space, line
terminators, a character outside the BMP).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_parser.schema.ecma_regex import PatternError, compile_pattern, translate_pattern


def matches(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        # \d, \w, \b are ASCII in ECMA-262; Python's are Unicode.
        (r"^\d+$", "123", True),
        (r"^\d+$", "١٢٣", False),
        (r"^\w+$", "é", False),
        (r"^\W$", "é", True),
        (r"\bfoo\b", "éfooé", True),
        # $ is the end, not "before a final newline".
        (r"a$", "a\n", False),
        (r"^a$", "a", True),
        # . stops at every line terminator, \r and U+2028 included.
        (r"^a.c$", "a\rc", False),
        (r"^a.c$", "a\u2028c", False),
        (r"^a.c$", "a-c", True),
        (r"^.$", "🐲", True),  # a code point, as with the u flag
        # \s is ECMA-262's white space, which Python's misses some of.
        (r"^\s$", "\u00a0", True),
        (r"^\s$", "\ufeff", True),
        (r"^\s$", "\u2028", True),
        (r"^\S$", "\ufeff", False),
        (r"^[\s\S]$", "x", True),
        (r"^[^\S\n]$", " ", True),
        (r"^[^\S\n]$", "\n", False),
        (r"^[a\S]$", "a", True),
        (r"^[a\S]$", " ", False),
        # The empty class and its negation.
        (r"^[]$", "", False),
        (r"^[^]$", "\n", True),
        # Escapes.
        (r"^\uD83D\uDC32$", "🐲", True),
        (r"^\u{1F432}$", "🐲", True),
        (r"^\x41\u0042$", "AB", True),
        (r"^\cJ$", "\n", True),
        (r"^\0$", "\x00", True),
        (r"^[\b]$", "\x08", True),
        (r"^\/\.\*$", "/.*", True),
        # Annex B: what the u flag refuses but reads as a literal elsewhere.
        (r"^\-\@$", "-@", True),
        (r"^]}$", "]}", True),
        (r"^a{,3}$", "a{,3}", True),
        (r"^[\d-z]+$", "1-z", True),
        (r"^[\w\-]+$", "a-b", True),
        # Groups, look-around, laziness.
        (r"^(?<year>\d{4})-(?:\d\d)$", "2024-05", True),
        (r"^(?=.*\d)\w+$", "abc1", True),
        (r"^(?=.*\d)\w+$", "abc", False),
        (r"^(?!admin$)\w+$", "admin", False),
        (r"(?<=\$)\d+", "$42", True),
        (r"(?<!\$)\b\d+", "$42", False),
        (r"^x*?y$", "xxy", True),
        (r"cat|dog", "hotdog", True),  # a search, not a full match
    ],
)
def test_each_construct_keeps_its_ecma_meaning(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "back-references"),
        (r"(?<n>a)\k<n>", "back-references"),
        (r"\p{L}", "Unicode property escapes"),
        (r"(?i:a)", "group modifiers"),
        (r"(?i)a", "group modifiers"),
        (r"(?<=a+)b", "look-behind requires fixed-width"),
        (r"\a", "unknown escape"),
        (r"\01", "legacy octal"),
        (r"\c1", "'\\c' must be followed by a letter"),
        (r"\xZ", "'\\x' must be followed by two hexadecimal digits"),
        (r"\u{110000}", "code point out of range"),
        (r"a**", "nothing to repeat"),
        (r"a*+", "nothing to repeat"),  # possessive in Python, an error in ECMA-262
        (r"*a", "nothing to repeat"),
        (r"^*", "an assertion cannot be repeated"),
        (r"(?=a)*", "an assertion cannot be repeated"),
        (r"(a", "missing ')'"),
        (r"a)", "unmatched ')'"),
        (r"[a", "missing ']'"),
        (r"[z-a]", "range out of order"),
        (r"a{3,2}", "numbers out of order"),
        (r"a\\" + "\\", "cannot end with"),
        (r"(?<1>a)", "invalid group name"),
        (r"a{99999999999}", "repetition"),
    ],
)
def test_what_cannot_keep_its_meaning_is_refused(pattern: str, reason: str) -> None:
    with pytest.raises(PatternError, match=None) as caught:
        compile_pattern(pattern)
    assert reason in str(caught.value)


def test_a_deeply_nested_pattern_is_refused_not_a_crash() -> None:
    with pytest.raises(PatternError, match="nested too deeply"):
        translate_pattern("(" * 5000 + "a" + ")" * 5000)


def test_compiled_patterns_are_cached() -> None:
    assert compile_pattern(r"^\d+$") is compile_pattern(r"^\d+$")


# --- against an ECMA-262 engine -----------------------------------------------------------

pytest.importorskip("regress")

LITERALS = st.sampled_from(
    [
        *("a", "b", "Z", "0", "é", "🐲", "-", "_", " ", "]", "}", "\\.", "\\*", "\\-", "\\/"),
        *("\\u0041", "\\x61", "\\u{1F432}", "\\uD83D\\uDC32", "\\t", "\\n", "\\0", "\\cJ"),
        "\\@",
    ]
)
CLASS_ESCAPES = st.sampled_from(["\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "."])
CLASS_ITEMS = st.sampled_from(
    [
        *("a-z", "0-9", "A-Z", "é", "🐲", "-", "\\-", "\\]", "\\b", "\\u00a0", "\\d", "\\D"),
        *("\\w", "\\W", "\\s", "\\S", "\\n", "^", "[", "a"),
    ]
)
CLASSES = st.builds(
    lambda negated, items: "[" + ("^" if negated else "") + "".join(items) + "]",
    st.booleans(),
    st.lists(CLASS_ITEMS, max_size=3),
)
QUANTIFIERS = st.sampled_from(["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?", "??"])
ASSERTIONS = st.sampled_from(["^", "$", "\\b", "\\B"])
TERMS = st.builds(lambda atom, q: atom + q, LITERALS | CLASS_ESCAPES | CLASSES, QUANTIFIERS)


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return (
        st.lists(inner, min_size=1, max_size=3).map("".join)
        | st.tuples(inner, inner).map("|".join)
        | st.builds(lambda body, q: f"(?:{body}){q}", inner, QUANTIFIERS)
        | st.builds(lambda body, q: f"({body}){q}", inner, QUANTIFIERS)
        | st.builds(lambda body, q: f"(?<g>{body}){q}", inner, QUANTIFIERS)
        | inner.map(lambda body: f"(?={body})")
        | inner.map(lambda body: f"(?!{body})")
    )


PATTERNS = st.recursive(TERMS | ASSERTIONS, _extend, max_leaves=6)
# The characters on which ECMA-262 and Python disagree, and a few on which they agree.
TEXTS = st.text(
    st.sampled_from([*"aZ0-_ .@}]/*\t\n\r\x08\x00AbéE", "٣", "\u00a0", "\u2028", "\ufeff", "🐲"]),
    max_size=6,
)
PROPS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


# regress is a native extension that has crashed the interpreter on some patterns: it runs
# in a worker process, so that a crash costs that one example, not the test run.
_WORKER = """
import json, sys
import regress
for line in sys.stdin:
    pattern, text = json.loads(line)
    try:
        found = regress.Regex(pattern).find(text) is not None
    except regress.RegressError:
        found = None
    sys.stdout.write(json.dumps(found) + "\\n")
    sys.stdout.flush()
"""


class _Regress:
    """regress in a worker process: ``find`` answers True, False, "invalid" or None (crashed)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.communicate()
            self._process = None

    def find(self, pattern: str, text: str) -> bool | str | None:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        assert self._process.stdin is not None and self._process.stdout is not None
        try:
            self._process.stdin.write(json.dumps([pattern, text]) + "\n")
            self._process.stdin.flush()
            answer = self._process.stdout.readline()
        except (BrokenPipeError, OSError):
            answer = ""
        if not answer:  # the worker died on this input: the next call starts another
            self.close()
            return None
        found = json.loads(answer)
        return "invalid" if found is None else bool(found)


_REGRESS = _Regress()


@pytest.fixture(scope="module", autouse=True)
def _regress_worker() -> Iterator[None]:
    yield
    _REGRESS.close()


def _check_against_regress(pattern: str, text: str) -> None:
    reference = _REGRESS.find(pattern, text)
    if reference is None:  # regress crashed: V8 answers where node is installed and can
        reference = _v8_matches(pattern, text)
        if reference is None:
            return
    try:
        ours = compile_pattern(pattern)
    except PatternError:
        return  # refused: the pattern becomes unenforced, never wrong
    assert reference != "invalid", f"{pattern!r} is no ECMA-262 pattern, but was accepted"
    expected = reference is True
    found = ours.search(text) is not None
    if found is not expected:
        # regress has bugs of its own: it finds no match for (?:(?:(?:\D)+)+){2} in "@@",
        # where V8, an ECMA-262 engine, does.  Where node is installed, V8 decides.
        v8 = _v8_matches(pattern, text)
        expected = expected if v8 is None else v8
    assert found is expected, (pattern, text, translate_pattern(pattern))


def _v8_matches(pattern: str, text: str) -> bool | None:
    """Whether V8 (node, ``u`` flag: regress's mode) finds ``pattern`` in ``text``.

    None without node, or where V8 refuses the pattern (its ``u`` mode is stricter than
    regress about escapes such as ``\\@``).
    """
    node = shutil.which("node")
    if node is None:
        return None
    script = "const [p, t] = JSON.parse(process.argv[1]); console.log(new RegExp(p, 'u').test(t))"
    done = subprocess.run(
        [node, "-e", script, json.dumps([pattern, text])],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if done.returncode != 0:
        return None
    return done.stdout.strip() == "true"


@PROPS
@given(PATTERNS, TEXTS)
def test_patterns_mean_what_ecma_262_means(pattern: str, text: str) -> None:
    _check_against_regress(pattern, text)


@pytest.mark.slow
@settings(max_examples=8_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(PATTERNS, TEXTS)
def test_patterns_mean_what_ecma_262_means_long(pattern: str, text: str) -> None:
    _check_against_regress(pattern, text)


def test_nested_quantifiers_mean_what_v8_means() -> None:
    """A case where the reference library errs: V8 (and so the translation) matches."""
    assert matches(r"(?:(?:(?:\D)+)+){2}", "@@")
    if shutil.which("node") is not None:
        assert _v8_matches(r"(?:(?:(?:\D)+)+){2}", "@@") is True
        _check_against_regress(r"(?:(?:(?:\D)+)+){2}", "@@")
