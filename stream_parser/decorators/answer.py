r"""The answer contract: a model's final answer, read as a value of the declared return type.

Theory of operation.  A typed LLM function returns what its annotation says.  The model's
answer reaches this module as text, exactly as written (thinking and tool-call markup
already removed), and :func:`read_answer` turns it into that value or raises
:class:`InvalidAnswer`, which carries errors and a short message for the model: the
decorator re-asks with it, and gives up only at the end.  What a model writes is data,
so nothing else is ever raised for it.

How the text is read depends on what the annotation is (see ``docs/answers.md`` for the
full table):

* ``str`` (or no annotation): the text as written, not even stripped.  ``None``: None.
* An empty (or whitespace-only) answer is no answer, for every type but ``None``: it
  raises :class:`InvalidAnswer` with ``empty`` set, and the decorator asks again.
* Scalars (``int``, ``float``, ``bool``, ``Literal``, ``Enum``, ``Decimal``,
  ``datetime``...): surrounding whitespace, a Markdown fence, a ``<result>`` element and
  JSON quotes are peeled off, then Pydantic's lax mode converts the string.
* Structured values (lists, tuples, sets, dicts, models, TypedDicts, dataclasses and
  ``Optional`` of them): candidates are looked for in turn -- the whole answer as JSON,
  each fenced block, a ``<result>`` element read by the lenient XML reader
  (:mod:`stream_parser.schema.answer_xml`), for a Pydantic model an element named after
  it (``<Person>``), JSON embedded in prose -- and the first that validates is the value.
  The scan for embedded JSON tries a bounded number of positions, and skips past each
  value it decodes, so prose of any length costs a bounded number of decode attempts.
* Other unions: JSON first, then the ``str`` member (the whole answer), if any.
* ``Any``: the answer decoded when the whole of it is JSON, else the text as written.

A :class:`AnswerReader` holds what is built once per annotation (the Pydantic
``TypeAdapter``, what the annotation is); :func:`reader_for` caches them.

Example:
    >>> from pydantic import BaseModel
    >>> class City(BaseModel):
    ...     name: str
    ...     population: int
    >>> read_answer('Here it is: {"name": "Oslo", "population": 709000} Hope it helps.', City)
    City(name='Oslo', population=709000)
    >>> read_answer("<result>\n<name>Oslo</name><population>709000</population></result>", City)
    City(name='Oslo', population=709000)
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading
from collections.abc import Iterator
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError

from ..schema.answer_xml import element_value, find_element, scalar_text
from ..schema.classify import Kind, TypeInfo, classify
from ..schema.coerce import NULL_TOKENS, coerce_value
from ..schema.typedesc import type_name
from ..schema.validation import json_safe_errors

__all__ = [
    "MAX_EMBEDDED_ATTEMPTS",
    "MAX_FENCES",
    "AnswerReader",
    "InvalidAnswer",
    "describe_answer_errors",
    "expects_text",
    "read_answer",
    "reader_for",
]

MAX_EMBEDDED_ATTEMPTS: Final = 64
"""At most this many positions of prose are tried as the start of an embedded JSON value."""

MAX_FENCES: Final = 16
"""At most this many fenced blocks of one answer are tried."""

_FENCE: Final = "```"
_GOT_CHARS: Final = 80
_MAX_LISTED_ERRORS: Final = 20
_MAX_PEEL: Final = 4  # fence, <result>, quotes: each peeled at most a few times
_NO_INPUT_TYPES: Final = frozenset({"missing", "answer_empty", "answer_missing", "json_invalid"})

_OBJECT_KINDS: Final = frozenset({Kind.MODEL, Kind.TYPEDDICT, Kind.DATACLASS, Kind.MAPPING})
_ARRAY_KINDS: Final = frozenset({Kind.SEQUENCE, Kind.TUPLE})
_STRUCTURED_KINDS: Final = _OBJECT_KINDS | _ARRAY_KINDS | {Kind.ROOT}
_EMPTY_ANNOTATIONS: Final = (inspect.Signature.empty, inspect.Parameter.empty)
_DECODER: Final = json.JSONDecoder()


class InvalidAnswer(Exception):
    """The answer could not be read into the return type.

    This is about model output, hence data: the decorator turns it into a re-ask, and at
    the end into its own error.

    Attributes:
        errors: JSON-safe, Pydantic-shaped error dicts (``type``, ``loc``, ``msg``,
            ``input``, sometimes ``ctx``).  Besides Pydantic's own types there are
            ``answer_empty`` (nothing was written), ``answer_missing`` (no JSON value or
            ``<result>`` element where a structured one is expected),
            ``json_invalid`` (a fenced block that is not JSON) and, for a streamed
            list, ``list_incomplete`` (the list broke off before the item its ``loc``
            names).
        message: a short English explanation for the model, naming each failing field
            by its path (``cities.1.population``).
        empty: whether the answer was empty or only whitespace.
    """

    errors: tuple[dict[str, Any], ...]
    message: str
    empty: bool

    def __init__(
        self, message: str, errors: tuple[dict[str, Any], ...] = (), *, empty: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors
        self.empty = empty

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle their args only; the errors and the flag must travel too.
        return (type(self), (self.message, self.errors), {"empty": self.empty})


# --- messages --------------------------------------------------------------------------


def _path(loc: Any) -> str:
    """``["cities", 1, "population"]`` -> ``cities.1.population``."""
    parts = loc if isinstance(loc, list | tuple) else (loc,)
    return ".".join(str(part) for part in parts)


def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > _GOT_CHARS:
        text = text[: _GOT_CHARS - 1] + "…"
    return text


def describe_answer_errors(type_label: str, errors: tuple[dict[str, Any], ...]) -> str:
    """Word answer errors for the model: one line per error, naming the field's path.

    Args:
        type_label: the expected type, as a prompt names it (``"Person"``, ``"int"``).
        errors: Pydantic-shaped error dicts.

    Returns:
        A first line naming the expected type and the error count, then one line per
        error (at most 20) as ``- path: reason (got value)``.

    Example:
        >>> error = {"type": "int_parsing", "loc": ["cities", 1, "population"],
        ...          "msg": "Input should be a valid integer", "input": "many"}
        >>> print(describe_answer_errors("Country", (error,)))
        The answer is not a valid Country (1 error):
        - cities.1.population: Input should be a valid integer (got 'many')
    """
    count = len(errors)
    lines = [f"The answer is not a valid {type_label} ({count} error{'s' if count != 1 else ''}):"]
    for error in errors[:_MAX_LISTED_ERRORS]:
        where = _path(error.get("loc", ()))
        line = f"- {where}: " if where else "- "
        line += str(error.get("msg", "invalid"))
        if error.get("type") not in _NO_INPUT_TYPES and "input" in error:
            line += f" (got {_got(error['input'])})"
        lines.append(line)
    if count > _MAX_LISTED_ERRORS:
        lines.append(f"- ... and {count - _MAX_LISTED_ERRORS} more")
    return "\n".join(lines)


# --- finding values in text ------------------------------------------------------------


def _decode_at(text: str, pos: int) -> tuple[Any, int] | None:
    """The JSON value starting at ``pos`` and where it ends, or None (one decode attempt)."""
    try:
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


def _loads(text: str) -> tuple[bool, Any]:
    """The whole of ``text`` as one JSON value: ``(True, value)``, or ``(False, None)``."""
    stripped = text.strip()
    if not stripped:
        return False, None
    decoded = _decode_at(stripped, 0)
    if decoded is None or decoded[1] != len(stripped):
        return False, None
    return True, decoded[0]


def _fences(text: str) -> Iterator[str]:
    """The contents of the Markdown fenced blocks of ``text``, in order (linear).

    A block opens with three backticks and an optional info word (``json``) on its line,
    and closes at the next three backticks; one left open runs to the end of the text.
    """
    pos = 0
    for _ in range(MAX_FENCES):
        start = text.find(_FENCE, pos)
        if start < 0:
            return
        line_end = text.find("\n", start + len(_FENCE))
        info = text[start + len(_FENCE) : line_end if line_end >= 0 else len(text)]
        if line_end < 0 or (info.strip() and not info.strip().isidentifier()):
            # ```{"a": 1}``` on one line: the content starts right after the backticks
            content_start = start + len(_FENCE)
        else:
            content_start = line_end + 1
        close = text.find(_FENCE, content_start)
        if close < 0:
            yield text[content_start:]
            return
        yield text[content_start:close]
        pos = close + len(_FENCE)


def _peel(text: str) -> str:
    """A scalar answer without the wrappings models put around one.

    Whitespace, a fenced block, a ``<result>`` element and JSON string quotes, in any
    nesting, a few levels deep.
    """
    value = text.strip()
    for _ in range(_MAX_PEEL):
        before = value
        if value.startswith(_FENCE):
            value = next(_fences(value), value).strip()
        if "<result" in value:
            element = find_element(value)
            if element is not None:
                value = scalar_text(element)
        if len(value) >= 2 and value[0] == value[-1] == '"':
            ok, decoded = _loads(value)
            if ok and isinstance(decoded, str):
                value = decoded.strip()
        if value == before:
            break
    return value


# --- the reader ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Failure:
    """A candidate that did not validate (or could not be decoded)."""

    errors: tuple[dict[str, Any], ...]


def _brackets(info: TypeInfo, depth: int = 0) -> str:
    """The opening brackets a JSON value of this type may start with."""
    if depth > 8:
        return "{["
    if info.kind in _OBJECT_KINDS:
        return "{"
    if info.kind in _ARRAY_KINDS:
        return "["
    if info.kind is Kind.ROOT:
        root = info.tp.model_fields.get("root")
        return "{[" if root is None else _brackets(classify(root.annotation), depth + 1)
    if info.kind is Kind.UNION:
        found = "".join(_brackets(classify(member), depth + 1) for member in info.args)
        return "".join(sorted(set(found)))
    if info.kind is Kind.ANY:
        return "{["
    return ""


class AnswerReader:
    """Reads answers for one annotation; build it once, use it for every call.

    Args:
        annotation: the declared return type; ``inspect.Signature.empty`` (no
            annotation) reads like ``str``.

    Raises:
        pydantic.errors.PydanticSchemaGenerationError: the annotation is not a type
            Pydantic can validate (a programmer error, raised when the reader is built).
    """

    def __init__(self, annotation: Any) -> None:
        self.annotation = annotation
        # Plain str (or nothing declared): the text itself, with nothing to check.
        self._verbatim = any(annotation is empty for empty in _EMPTY_ANNOTATIONS) or (
            annotation is str
        )
        self._text = expects_text(annotation)
        info = classify(annotation)
        self._none = info.kind is Kind.NONE
        self._adapter: TypeAdapter[Any] | None = None
        self.type_label = "str" if self._verbatim else type_name(annotation)
        if self._verbatim or self._none:
            return
        # Built once: a constrained str (Annotated[str, Field(max_length=...)]) is still
        # checked, and everything else validated, by this adapter.
        self._adapter = TypeAdapter(annotation)
        members = [classify(m) for m in info.args] if info.kind is Kind.UNION else [info]
        self._union = info.kind is Kind.UNION
        # Any: the answer as JSON when the whole of it is JSON, else the text as written
        # (prose is not searched: any value would do, so the first brace would win).
        self._any = info.kind is Kind.ANY
        self._has_str = any(m.kind is Kind.STR for m in members)
        self._allows_none = any(m.kind is Kind.NONE for m in members)
        self._structured = any(m.kind in _STRUCTURED_KINDS for m in members)
        self._brackets = _brackets(info)
        # The XML roots an answer may use: <result>, or a model's own name (<Person>).
        models = [(m.tp.__name__, m.tp) for m in members if m.kind in (Kind.MODEL, Kind.ROOT)]
        self._roots: tuple[tuple[str, Any], ...] = (("result", annotation), *models)

    def __repr__(self) -> str:
        return f"AnswerReader({self.type_label})"

    def read(self, text: str) -> Any:
        """Read one answer.

        Args:
            text: the model's final answer, exactly as written.

        Returns:
            A value of the annotation's type.

        Raises:
            InvalidAnswer: the answer is empty (or only whitespace; for every type but
                ``None``), or holds no value of the type.
        """
        if self._none:
            return None
        if not text.strip():
            # Nothing said is no answer, whatever the type (a str too): it is asked again.
            error = {
                "type": "answer_empty",
                "loc": [],
                "msg": f"The answer is empty; expected {self.type_label}",
                "input": text,
            }
            raise InvalidAnswer(
                describe_answer_errors(self.type_label, (error,)), (error,), empty=True
            )
        if self._verbatim:
            return text
        if self._text:  # the text as written, under the type's own checks
            return self._validate_or_raise(text)
        first: _Failure | None = None
        for candidate in self._candidates(text):
            if isinstance(candidate, _Failure):
                first = first or candidate
                continue
            outcome = self._validate(candidate)
            if not isinstance(outcome, _Failure):
                return outcome
            first = first or outcome
        if self._has_str or self._any:  # not JSON (or none that fits): the answer as written
            outcome = self._validate(text)
            if not isinstance(outcome, _Failure):
                return outcome
            first = first or outcome
        if first is None:
            error = {
                "type": "answer_missing",
                "loc": [],
                "msg": self._missing_message(),
                "input": text,
            }
            first = _Failure((error,))
        raise InvalidAnswer(describe_answer_errors(self.type_label, first.errors), first.errors)

    # --- internals ---

    def _missing_message(self) -> str:
        what = "a JSON object" if self._brackets == "{" else "a JSON array"
        if len(self._brackets) != 1:
            what = "a JSON value"
        return f"expected {what} (or a <result> element) for {self.type_label}; the answer has none"

    def _validate(self, value: Any) -> Any:
        assert self._adapter is not None
        try:
            return self._adapter.validate_python(value)
        except ValidationError as exc:
            return _Failure(json_safe_errors(exc))

    def _validate_or_raise(self, value: Any) -> Any:
        outcome = self._validate(value)
        if isinstance(outcome, _Failure):
            message = describe_answer_errors(self.type_label, outcome.errors)
            raise InvalidAnswer(message, outcome.errors, empty=not str(value).strip())
        return outcome

    def _candidates(self, text: str) -> Iterator[Any]:
        """The values the answer may hold, most likely first.

        A fenced block that is not JSON comes as a :class:`_Failure`.
        """
        if self._any:
            ok, value = _loads(text)
            if ok:
                yield value
            return
        if not self._structured:
            yield from self._scalar_candidates(text)
            return
        ok, value = _loads(text)
        if ok:
            yield value
        peeled_null = _peel(text)
        if self._allows_none and peeled_null.lower() in NULL_TOKENS:
            yield None
        for block in _fences(text):
            ok, value = _loads(block)
            if ok:
                yield value
            elif block.strip():
                yield _Failure(
                    (
                        {
                            "type": "json_invalid",
                            "loc": [],
                            "msg": "The fenced block is not valid JSON",
                            "input": block,
                        },
                    )
                )
        for tag, annotation in self._roots:
            if f"<{tag}" in text:
                element = find_element(text, tag)
                if element is not None:
                    yield element_value(element, annotation)
        yield from self._embedded(text)

    def _scalar_candidates(self, text: str) -> Iterator[Any]:
        value = _peel(text)
        if self._allows_none and value.lower() in NULL_TOKENS:
            yield None
        if self._union and self._has_str:
            # JSON first (42 is an int for int | str); anything else is for the str
            # member, which takes the whole answer as written.
            ok, decoded = _loads(value)
            if ok:
                yield decoded
            return
        yield value
        converted = coerce_value(value, self.annotation)  # enum by name, yes/no...
        if converted is not value:
            yield converted

    def _embedded(self, text: str) -> Iterator[Any]:
        """JSON values inside prose, at the brackets the type may start with."""
        if not self._brackets:
            return
        pos = 0
        for _ in range(MAX_EMBEDDED_ATTEMPTS):
            starts = [found for b in self._brackets if (found := text.find(b, pos)) >= 0]
            if not starts:
                return
            start = min(starts)
            decoded = _decode_at(text, start)
            if decoded is None:
                pos = start + 1
                continue
            yield decoded[0]
            pos = decoded[1]  # past the whole value: its inner brackets are not tried


def expects_text(annotation: Any) -> bool:
    """Whether answers for ``annotation`` are the text as written (``str``, or no annotation).

    ``Annotated[str, ...]``, a ``NewType`` of ``str`` and ``str`` aliases count; a union
    does not (``str | None`` still reads ``null``).

    Example:
        >>> import inspect
        >>> expects_text(str), expects_text(inspect.Signature.empty), expects_text(int)
        (True, True, False)
    """
    if any(annotation is empty for empty in _EMPTY_ANNOTATIONS):
        return True
    return classify(annotation).kind is Kind.STR


# Keyed by identity, as classification is: ``int | str`` equals ``str | int`` but reads
# answers differently.  The entry keeps the annotation alive, so its id stays unique.
_readers: dict[int, tuple[Any, AnswerReader]] = {}
_readers_lock = threading.Lock()
_CACHE_LIMIT: Final = 1024


def reader_for(annotation: Any) -> AnswerReader:
    """The cached :class:`AnswerReader` of an annotation (built on first use).

    Example:
        >>> reader_for(int) is reader_for(int)
        True
    """
    entry = _readers.get(id(annotation))
    if entry is not None and entry[0] is annotation:
        return entry[1]
    reader = AnswerReader(annotation)
    with _readers_lock:
        if len(_readers) >= _CACHE_LIMIT:  # annotations built on the fly: start again
            _readers.clear()
        _readers[id(annotation)] = (annotation, reader)
    return reader


def read_answer(text: str, annotation: Any) -> Any:
    """Read a model's final answer as a value of ``annotation``.

    Args:
        text: the answer exactly as the model wrote it.
        annotation: the function's return annotation (``inspect.Signature.empty`` when
            there is none).

    Returns:
        The value (see the module's docstring and ``docs/answers.md`` for the rules).

    Raises:
        InvalidAnswer: the answer holds no value of the type; never anything else for
            what a model wrote.

    Example:
        >>> read_answer(' "42" ', int), read_answer("Yes", bool), read_answer("42", float)
        (42, True, 42.0)
    """
    return reader_for(annotation).read(text)
