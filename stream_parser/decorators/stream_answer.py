r"""Typed answers read as they stream: list items and model fields as soon as they complete.

Theory of operation.  :mod:`.answer` reads a whole answer once it has arrived.  The
readers here read it *while* it arrives, so that a function returning a list can hand
out each item, and one returning a model each field, the moment it is complete:

* :class:`ItemReader` reads a list answer: a JSON array, or ``<item>`` elements (inside
  ``<result>`` or bare).  Each item is validated once, when it completes, and reported as
  :class:`ItemDone` or :class:`ItemInvalid`.
* :class:`FieldReader` reads a model answer: a JSON object, or a ``<result>`` element
  with one child element per field.  Each field is validated once, when it completes,
  and reported as :class:`FieldDone` or :class:`FieldInvalid`; :meth:`FieldReader.close`
  then builds the instance.

Where the value begins.  Text before the value (prose, a Markdown fence line) is
skipped: the value begins at the first ``[`` (``{`` for a model) anywhere in the text,
at the first ``<result>`` start tag, or, for a list, at the first ``<item>`` start tag,
whichever comes first.  Right after ``<result>`` a JSON value may follow (``<result>
[1, 2]</result>``); otherwise the result's child elements are read.  A bracket that
turns out not to start JSON (``see [the note] below``: the structure breaks before a
first item or field completes) is given up, and the search goes on right after it, a
bounded number of times (:data:`MAX_RESTARTS`).  Once an item or field has completed,
the reader is committed to that value.

Where a list breaks.  A list that was found but does not end properly -- the reply cut
short, a stray bracket, a string or an ``<item>`` left open, ``</result>`` closing over
an open item -- broke before the first item it lacks, and :class:`ItemReader` reports
that item as :class:`ItemInvalid` (error type ``list_incomplete``): a list that broke
after one item is not taken for a list of one item.

Cost.  The JSON side runs on :class:`~stream_parser.core.kit.JsonScanner`, the XML
side on :class:`~stream_parser.schema.answer_xml.ChildSplitter`; both look at each
character a bounded number of times and hold only the part being read (the current item
or field, a partial tag).  Until the first item or field completes, the text since the
bracket is held too, as the bracket may still turn out to be prose; searching it again
happens at most :data:`MAX_RESTARTS` times, so the total stays linear.  Each item or
field is decoded and validated once.  The events do not depend on how the text was cut
into chunks.  A list field written in XML as its tag repeated (``<tags>a</tags>
<tags>b</tags>``) is reported when the next field completes or the result ends; one
still open when the reply ends counts in :meth:`FieldReader.close`.

Validation of a field.  A field is checked with a one-field model built from the
field's ``FieldInfo`` and the model's field validators for it (cached per model and
field): its ``Annotated`` constraints and validators run when the field closes, never on
every chunk.  A field validator taking ``info`` finds in ``info.data`` the fields
declared before its field, as in a whole validation (those that are valid): such a field
is held until those fields have all come (or the reply ends), then validated, with them
passed through as they were validated.  If a field validator raises anything other than
a validation error, no event is reported for the field and the model is validated whole
at the end (where the error is raised again, as ``model_validate`` would).

Building the model.  :meth:`FieldReader.close` makes the instance with
``model_construct`` from the validated field values (defaults for the fields not
written), then runs the model's ``after`` model validators, in order: every validator
runs once in total.  Some models need the raw input instead -- ``before``, ``wrap`` or
``plain`` model validators, or Pydantic v1-style validators -- and are validated whole
at the end with ``model_validate``; for them the field validators run a second time,
and the field events of the stream are only previews.  Aliases: a field is found under
its name and its plain-string aliases (``alias``, a ``str`` or the strings of an
``AliasChoices`` ``validation_alias``); an ``AliasPath`` is not followed.

What a model writes is data: nothing here raises for it, except
:class:`~.answer.InvalidAnswer` from :meth:`FieldReader.close`.

Example:
    >>> from pydantic import BaseModel
    >>> class City(BaseModel):
    ...     name: str
    ...     population: int
    >>> reader = ItemReader(City)
    >>> events = reader.feed('Here you go: [{"name": "Oslo", "population": 709000}, {"na')
    >>> events += reader.feed('me": "Rome", "population": "many"}]')
    >>> [type(event).__name__ for event in events], events[0].value.name, reader.complete
    (['ItemDone', 'ItemInvalid'], 'Oslo', True)
    >>> fields = FieldReader(City)
    >>> [event.name for event in fields.feed("<result><population>7</population><name>Ri")]
    ['population']
    >>> [event.value for event in fields.feed("ga</name></result>")]
    ['Riga']
    >>> fields.close()
    City(name='Riga', population=7)
"""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, create_model
from pydantic import field_validator as _field_validator

from ..core.kit import JsonMark, JsonScanner
from ..schema.answer_xml import ChildSplitter, Element, element_value
from ..schema.classify import Kind, classify
from ..schema.coerce import fields_of
from ..schema.typedesc import type_name
from ..schema.validation import json_safe_errors
from .answer import InvalidAnswer, describe_answer_errors

__all__ = [
    "MAX_RESTARTS",
    "FieldDone",
    "FieldInvalid",
    "FieldReader",
    "ItemDone",
    "ItemInvalid",
    "ItemReader",
]

MAX_RESTARTS: Final = 8
"""At most this many brackets that do not start JSON are given up before the value."""

_MAX_TAG: Final = 64  # "<result ...>" longer than this is not the start tag sought
_DECODER: Final = json.JSONDecoder(strict=False)  # models write raw control characters
_WHITESPACE: Final = " \t\r\n"


# --- events ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ItemDone:
    """Item ``index`` of the list is complete and valid; ``value`` is the validated item."""

    index: int
    value: Any


@dataclass(frozen=True, slots=True)
class ItemInvalid:
    """Item ``index`` is complete but invalid.

    Attributes:
        index: the item's index in the list.
        errors: JSON-safe, Pydantic-shaped errors; each ``loc`` starts with ``index``.
        message: the errors worded for the model (as :func:`.describe_answer_errors`).
        text: the item's text as written (its JSON, or its element's content); empty
            when the list broke before the item (error type ``list_incomplete``).
    """

    index: int
    errors: tuple[dict[str, Any], ...]
    message: str
    text: str


@dataclass(frozen=True, slots=True)
class FieldDone:
    """Field ``name`` of the model is complete and valid (a nested model as its instance)."""

    name: str
    value: Any


@dataclass(frozen=True, slots=True)
class FieldInvalid:
    """Field ``name`` is complete but invalid.

    Attributes:
        name: the field's name (not its alias).
        errors: JSON-safe, Pydantic-shaped errors; each ``loc`` starts with the key the
            field was validated under.
        message: the errors worded for the model.
        text: the field's text as written.
    """

    name: str
    errors: tuple[dict[str, Any], ...]
    message: str
    text: str


# --- finding the value -----------------------------------------------------------------

_START_TAG: Final = re.compile(r"<(result|item)(\s[^<>]*?)?(/?)>")
_CUT_ITEM_TAG: Final = re.compile(r"<i(?:t(?:e(?:m(?:[\s/][^<>]*)?)?)?)?\Z")  # "<ite", "<item a="


class _Seeker:
    """Finds where the value begins (see the module's docstring for the rule).

    :meth:`feed` returns None while nothing is found, else ``(how, rest)``: ``how`` is
    ``"json"`` (``rest`` starts at the bracket), ``"result"`` (``rest`` follows the start
    tag), ``"empty"`` (``<result/>``) or ``"bare"`` (``rest`` starts at the ``<item>``).
    """

    __slots__ = ("_bare", "_bracket", "_pattern", "_tail")

    def __init__(self, bracket: str, bare: bool) -> None:
        self._bracket = bracket
        self._bare = bare
        self._pattern = re.compile("[" + re.escape(bracket) + "<]")
        self._tail = ""  # a "<" that may begin a start tag, waiting for more text

    @property
    def retained(self) -> int:
        return len(self._tail)

    def feed(self, chunk: str) -> tuple[str, str] | None:
        text = self._tail + chunk
        self._tail = ""
        pos = 0
        while True:
            found = self._pattern.search(text, pos)
            if found is None:
                return None
            at = found.start()
            if text[at] == self._bracket:
                return "json", text[at:]
            match = _START_TAG.match(text, at)
            if match is None:
                window = text[at + 1 : at + 1 + _MAX_TAG]
                if "<" not in window and ">" not in window and len(text) - at <= _MAX_TAG:
                    self._tail = text[at:]  # perhaps "<resu" of "<result>": wait
                    return None
                pos = at + 1
                continue
            if match.group(1) == "item":
                if self._bare:
                    return "bare", text[at:]
                pos = match.end()
                continue
            if match.group(3):
                return "empty", ""
            return "result", text[match.end() :]


# --- validation helpers ----------------------------------------------------------------

_adapters: dict[int, tuple[Any, TypeAdapter[Any]]] = {}
_adapters_lock = threading.Lock()
_CACHE_LIMIT: Final = 1024


def _adapter_for(annotation: Any) -> TypeAdapter[Any]:
    """The cached ``TypeAdapter`` of an item annotation (by identity, like the readers)."""
    entry = _adapters.get(id(annotation))
    if entry is not None and entry[0] is annotation:
        return entry[1]
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    with _adapters_lock:
        if len(_adapters) >= _CACHE_LIMIT:
            _adapters.clear()
        _adapters[id(annotation)] = (annotation, adapter)
    return adapter


def _json_error(loc: list[Any], text: str, what: str) -> dict[str, Any]:
    return {
        "type": "json_invalid",
        "loc": loc,
        "msg": f"The {what} is not valid JSON",
        "input": text,
    }


def _decode(text: str) -> tuple[bool, Any]:
    """The JSON value of ``text``: ``(True, value)`` or ``(False, None)``."""
    try:
        return True, _DECODER.decode(text)
    except (ValueError, RecursionError):
        return False, None


@dataclass(slots=True)
class _JsonSide:
    """The JSON value being read, with the text kept until its first part completes.

    Until then the value may still turn out not to be JSON (a bracket in prose), and the
    search for the value goes on from just after its bracket.
    """

    scanner: JsonScanner = field(default_factory=JsonScanner)
    head: list[str] | None = field(default_factory=list)  # None once committed

    def feed(self, text: str) -> list[JsonMark]:
        if self.head is not None:
            self.head.append(text)
        return self.scanner.feed(text)

    @property
    def retained(self) -> int:
        return self.scanner.retained + (sum(map(len, self.head)) if self.head else 0)


# --- the shared reading loop ----------------------------------------------------------

EventT = TypeVar("EventT")


class _ValueReader(Generic[EventT]):
    """What both readers share: find the value, then read it as JSON or as XML elements.

    A subclass says which bracket opens its JSON value, which scanner marks are its
    parts, and what to do with a part (a JSON ``element`` / ``member``, an XML element).
    """

    _bracket: ClassVar[str] = "["
    _part: ClassVar[str] = "element"  # the JsonMark kind of a part of the value
    _bare_items: ClassVar[bool] = False  # bare <item> elements count as the value

    def __init__(self) -> None:
        self._seeker: _Seeker | None = _Seeker(self._bracket, bare=self._bare_items)
        self._after_result = False  # just past "<result>": JSON or elements follow
        self._json: _JsonSide | None = None
        self._xml: ChildSplitter | None = None
        self._restarts = 0
        self._stopped = False
        self.found = False
        self.complete = False

    @property
    def retained(self) -> int:
        """How many characters of the reply the reader holds (a bounded amount)."""
        held = self._seeker.retained if self._seeker else 0
        held += self._json.retained if self._json else 0
        return held + (self._xml.retained if self._xml else 0)

    def feed(self, chunk: str) -> list[EventT]:
        """Read the next chunk of the reply; return the parts it completed, in order."""
        events: list[EventT] = []
        self._read(chunk, events)
        return events

    # --- hooks ---

    def _opened(self, how: str) -> None:
        """The value was found (``how`` as :class:`_Seeker` says)."""

    def _json_part(self, mark: JsonMark, ok: bool, value: Any, events: list[EventT]) -> None:
        """A part of the JSON value completed (``ok``: it decoded, to ``value``)."""
        raise NotImplementedError

    def _element(self, element: Element, events: list[EventT]) -> None:
        """An XML element of the value completed."""
        raise NotImplementedError

    def _result_end(self, events: list[EventT]) -> None:
        """``</result>`` arrived."""

    def _json_broke(self, reason: str, committed: bool, events: list[EventT]) -> None:
        """The JSON value broke (``reason``) and is given up; ``committed``: after a part."""

    # --- the loop ---

    def _read(self, text: str, events: list[EventT]) -> None:
        while text and not self._stopped:
            if self._seeker is not None:
                found = self._seeker.feed(text)
                if found is None:
                    return
                how, text = found
                self._seeker = None
                self.found = True
                self._opened(how)
                if how == "empty":
                    self.complete = self._stopped = True
                elif how == "json":
                    self._json = _JsonSide()
                elif how == "result":
                    self._after_result = True
                else:
                    self._xml = ChildSplitter(None, "item")
                continue
            if self._after_result:
                stripped = text.lstrip(_WHITESPACE)
                if not stripped:
                    return
                self._after_result = False
                if stripped[0] == self._bracket:
                    self._json, text = _JsonSide(head=None), stripped
                else:
                    self._xml = ChildSplitter("result")
                continue
            if self._xml is not None:
                for element in self._xml.feed(text):
                    self._element(element, events)
                if self._xml.done:
                    self.complete = self._stopped = True
                    self._result_end(events)
                return
            assert self._json is not None
            text = self._json_feed(self._json, text, events)

    def _json_feed(self, side: _JsonSide, text: str, events: list[EventT]) -> str:
        """Feed the value; return text to search again if the bracket was not JSON."""
        for mark in side.feed(text):
            if mark.kind == self._part:
                ok, value = _decode(mark.text or "")
                if side.head is not None:
                    if not ok and self._restarts < MAX_RESTARTS:
                        return self._restart(side.head)  # "[the note]": prose, not JSON
                    side.head = None  # committed: a first part completed
                self._json_part(mark, ok, value, events)
            elif mark.kind == "end":
                self.complete = self._stopped = True
                return ""
            elif mark.kind == "error":
                if side.head is not None and self._restarts < MAX_RESTARTS:
                    return self._restart(side.head)
                self._stopped = True  # broken JSON: the parts so far stand
                self._json_broke(mark.reason, side.head is None, events)
                return ""
        return ""

    def _restart(self, head: list[str]) -> str:
        """The bracket did not start the value: search again right after it."""
        self._restarts += 1
        self._json, self.found = None, False
        self._seeker = _Seeker(self._bracket, bare=self._bare_items)
        return "".join(head)[1:]


# --- items -----------------------------------------------------------------------------


class ItemReader(_ValueReader[ItemDone | ItemInvalid]):
    """Reads the items of a list answer as the answer streams (one reader per reply).

    Args:
        item_annotation: the type of one item (``City`` for ``Iterator[City]``).
        start_index: the index of the reply's first item; a reply that continues a list
            (after a re-ask "from item k on") starts at ``k``.

    Attributes:
        found: a list was found (a JSON array, or ``<item>`` elements).
        complete: the list ended properly (the array's ``]``, ``</result>`` with no item
            left open, or, for bare ``<item>`` elements, the reply ended with no item or
            start tag of one left open).

    A list that is found but does not end properly broke before the first item it lacks:
    that item is reported as :class:`ItemInvalid`, with one error of type
    ``list_incomplete``.  A break in the JSON after the list's first item (a stray
    bracket, a missing comma) is reported where it is seen, the rest of the reply then
    being of no use; any other break (the reply cut short, an item left open) by
    :meth:`close`.

    Raises:
        pydantic.errors.PydanticSchemaGenerationError: the annotation is not a type
            Pydantic can validate (a programmer error, raised when the reader is built).

    Example:
        >>> reader = ItemReader(int, start_index=3)
        >>> reader.feed("<item>4</item><ite") + reader.feed("m>five</item>")
        ... # doctest: +ELLIPSIS
        [ItemDone(index=3, value=4), ItemInvalid(index=4, errors=(...), message=..., text='five')]
        >>> reader.close(), reader.found, reader.complete
        ([], True, True)
    """

    _bracket = "["
    _part = "element"
    _bare_items = True

    def __init__(self, item_annotation: Any, *, start_index: int = 0) -> None:
        super().__init__()
        self.item_annotation = item_annotation
        self._adapter = _adapter_for(item_annotation)
        self._label = f"list[{type_name(item_annotation)}]"
        self._next = start_index
        self._first = start_index  # the index of the list's first item in this reply
        self._xml_bare = False  # the items are bare <item> elements (no <result>)
        self._broken = False  # the break of the list was reported
        self._json_error = ""  # why the JSON broke before its first item, if it did

    @property
    def items_read(self) -> int:
        """How many items of the list this reply completed, valid or not."""
        return self._next - self._first

    def close(self) -> list[ItemDone | ItemInvalid]:
        """The reply ended: settle :attr:`complete`; report the break of an unfinished list.

        Returns:
            ``[ItemInvalid]`` for the first item a list that was found but did not end
            properly lacks (once), else ``[]``.
        """
        xml = self._xml
        events: list[ItemDone | ItemInvalid] = []
        if (
            xml is not None
            and self._xml_bare
            and not xml.in_child
            and _CUT_ITEM_TAG.match(xml.held) is None  # not cut inside an <item> start tag
        ):
            self.complete = self._next > self._first or self.complete
        self._stopped = True
        if self.found and not self.complete and not self._broken:
            if self._json is not None:
                why = self._json_error or "the answer ends before the JSON array is closed"
            elif xml is not None and self._xml_bare:
                why = "the answer ends before this <item> is closed"
            else:
                why = "the answer ends before </result>"
            self._break(why, events)
        return events

    # --- internals ---

    def _opened(self, how: str) -> None:
        self._first = self._next
        self._xml_bare = how == "bare"

    def _json_broke(
        self, reason: str, committed: bool, events: list[ItemDone | ItemInvalid]
    ) -> None:
        if committed:
            self._break(reason, events)
        else:
            # Before a first item the bracket may not have been the list at all: the
            # break waits for the end of the reply, which may then be read whole.
            self._json_error = reason

    def _result_end(self, events: list[ItemDone | ItemInvalid]) -> None:
        assert self._xml is not None
        if self._xml.dropped:
            self.complete = False
            self._break("</result> closes the list while an item is still open", events)

    def _break(self, why: str, events: list[ItemDone | ItemInvalid]) -> None:
        """The list broke before item ``self._next``: report that item, once."""
        self._broken = True
        index = self._next
        error = {"type": "list_incomplete", "loc": [index], "msg": f"The list breaks off: {why}"}
        message = describe_answer_errors(self._label, (error,))
        events.append(ItemInvalid(index, (error,), message, ""))

    def _json_part(
        self, mark: JsonMark, ok: bool, value: Any, events: list[ItemDone | ItemInvalid]
    ) -> None:
        raw = mark.text or ""
        if ok:
            events.append(self._check(self._next, value, raw))
        else:
            errors = (_json_error([self._next], raw, "item"),)
            events.append(self._invalid(self._next, errors, raw))

    def _element(self, element: Element, events: list[ItemDone | ItemInvalid]) -> None:
        events.append(self._check_element(element))

    def _check_element(self, element: Element) -> ItemDone | ItemInvalid:
        return self._check(self._next, element_value(element, self.item_annotation), element.raw)

    def _check(self, index: int, value: Any, text: str) -> ItemDone | ItemInvalid:
        try:
            valid = self._adapter.validate_python(value)
        except ValidationError as exc:
            errors = tuple(
                {**error, "loc": [index, *error.get("loc", ())]} for error in json_safe_errors(exc)
            )
            return self._invalid(index, errors, text)
        self._next += 1
        return ItemDone(index, valid)

    def _invalid(self, index: int, errors: tuple[dict[str, Any], ...], text: str) -> ItemInvalid:
        self._next += 1
        return ItemInvalid(index, errors, describe_answer_errors(self._label, errors), text)


# --- fields ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Info:
    """What an ``after`` model validator taking ``info`` is given when called at the end."""

    config: Any
    context: Any = None
    data: dict[str, Any] = field(default_factory=dict)
    field_name: str | None = None
    mode: Literal["python", "json", "strings"] = "python"


def _takes_info(func: Callable[..., Any], before_info: int) -> bool:
    """Whether a validator takes an ``info`` argument after its ``before_info`` ones.

    ``func`` is what the model's decorators hold: a field validator bound to the model
    (``value[, handler][, info]``), or an ``after`` model validator as a plain function
    (``self[, info]``).
    """
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # a builtin or odd callable: called without info
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
    return variadic or len(positional) > before_info


def _shim(bound: Callable[..., Any], mode: str, takes_info: bool) -> Callable[..., Any]:
    """A field validator of the model, re-targeted at a one-field model.

    The shim calls the model's own (bound) validator, so ``cls`` inside it is still the
    model.
    """
    if mode == "wrap":
        if takes_info:

            def wrap_info(cls: Any, value: Any, handler: Any, info: Any) -> Any:
                return bound(value, handler, info)

            return wrap_info

        def wrap(cls: Any, value: Any, handler: Any) -> Any:
            return bound(value, handler)

        return wrap
    if takes_info:

        def call_info(cls: Any, value: Any, info: Any) -> Any:
            return bound(value, info)

        return call_info

    def call(cls: Any, value: Any) -> Any:
        return bound(value)

    return call


class _ModelPlan:
    """What reading one model needs, built once per model (one-field models lazily)."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self.label = type_name(model)
        self.fields = fields_of(model)  # every accepted name -> the field
        decorators = model.__pydantic_decorators__
        modes = [dec.info.mode for dec in decorators.model_validators.values()]
        # Validators needing the raw input: the model is validated whole at the end.
        self.whole = (
            any(mode != "after" for mode in modes)
            or bool(decorators.validators)
            or bool(decorators.root_validators)
        )
        self.after: list[tuple[Callable[..., Any], bool]] = [
            (dec.func, _takes_info(dec.func, 1))
            for dec in decorators.model_validators.values()
            if dec.info.mode == "after"
        ]
        self.required = [name for name, info in model.model_fields.items() if info.is_required()]
        names = list(model.model_fields)
        # A field validator taking ``info`` may read ``info.data``: the fields declared
        # before its field, as Pydantic validates them in declaration order.
        self.earlier: dict[str, tuple[str, ...]] = {}
        for position, name in enumerate(names):
            if any(
                _takes_info(dec.func, 2 if dec.info.mode == "wrap" else 1)
                for dec in self._validators_of(name)
            ):
                self.earlier[name] = tuple(names[:position])
        self._one: dict[tuple[str, tuple[str, ...]], type[BaseModel]] = {}
        self._lock = threading.Lock()

    def _validators_of(self, name: str) -> list[Any]:
        return [
            dec
            for dec in self.model.__pydantic_decorators__.field_validators.values()
            if name in dec.info.fields or "*" in dec.info.fields
        ]

    def one_field(self, name: str, data: tuple[str, ...] = ()) -> type[BaseModel]:
        """The model that validates field ``name`` (cached).

        Args:
            name: the field.
            data: earlier fields, already validated, for ``info.data``: they come first,
                typed ``Any``, so that they are passed through untouched.
        """
        found = self._one.get((name, data))
        if found is not None:
            return found
        info = self.model.model_fields[name]
        validators: dict[str, Any] = {}
        for dec in self._validators_of(name):
            mode: Literal["before", "after", "wrap", "plain"] = dec.info.mode
            takes_info = _takes_info(dec.func, 2 if mode == "wrap" else 1)
            shim = _shim(dec.func, mode, takes_info)
            validators[dec.cls_var_name] = _field_validator(name, mode=mode, check_fields=False)(
                shim
            )
        config = {k: v for k, v in self.model.model_config.items() if k != "alias_generator"}
        fields: dict[str, Any] = {other: (Any, ...) for other in data}
        fields[name] = (info.annotation, info)
        one: type[BaseModel] = create_model(
            f"{self.model.__name__}.{name}",
            __config__=ConfigDict(**config),  # type: ignore[typeddict-item]
            __validators__=validators,
            **fields,
        )
        with self._lock:
            if len(self._one) >= _CACHE_LIMIT:
                self._one.clear()
            self._one[(name, data)] = one
        return one


_plans: dict[type[BaseModel], _ModelPlan] = {}
_plans_lock = threading.Lock()


def _plan_for(model: type[BaseModel]) -> _ModelPlan:
    plan = _plans.get(model)
    if plan is None:
        plan = _ModelPlan(model)
        with _plans_lock:
            if len(_plans) >= _CACHE_LIMIT:
                _plans.clear()
            _plans[model] = plan
    return plan


class FieldReader(_ValueReader[FieldDone | FieldInvalid]):
    r"""Reads the fields of a model answer as it streams (one reader per reply).

    Args:
        model: the Pydantic model the answer is read as.

    Attributes:
        found: the value was found (a JSON object, or a ``<result>`` element).
        complete: it ended properly (the object's ``}``, or ``</result>``).

    Example:
        >>> from pydantic import BaseModel
        >>> class Pair(BaseModel):
        ...     left: int
        ...     right: int = 0
        >>> reader = FieldReader(Pair)
        >>> reader.feed('```json\n{"left": "4", "other": 1}\n```')
        [FieldDone(name='left', value=4)]
        >>> reader.close()
        Pair(left=4, right=0)
    """

    _bracket = "{"
    _part = "member"

    def __init__(self, model: type[BaseModel]) -> None:
        super().__init__()
        self.model = model
        self._plan = _plan_for(model)
        self._whole = self._plan.whole
        self._values: dict[str, Any] = {}  # validated, by field name
        self._raw: dict[str, Any] = {}  # as written (decoded), by validation key
        self._invalid: dict[str, tuple[dict[str, Any], ...]] = {}
        self._pending: tuple[str, list[Element]] | None = None  # a list field's elements
        self._held: dict[str, tuple[str, Any, str]] = {}  # complete, not yet validated

    def close(self) -> Any:
        """The reply ended: build the instance from the fields read.

        Returns:
            The validated model instance.

        Raises:
            InvalidAnswer: no object or ``<result>`` was found, a field was invalid, a
                required field is missing, or a model validator failed.  (A validator of
                the model that raises something else than a validation error is a bug in
                it: that propagates, as from ``model_validate``.)
        """
        self._stopped = True
        self._flush([])
        self._settle([], final=True)
        plan = self._plan
        if not self.found:
            error = {
                "type": "answer_missing",
                "loc": [],
                "msg": f"expected a JSON object (or a <result> element) for {plan.label}; "
                "the answer has none",
            }
            raise InvalidAnswer(describe_answer_errors(plan.label, (error,)), (error,))
        if self._whole:
            try:
                return self.model.model_validate(self._raw)
            except ValidationError as exc:
                found = json_safe_errors(exc)
                raise InvalidAnswer(describe_answer_errors(plan.label, found), found) from None
        errors: list[dict[str, Any]] = [e for failed in self._invalid.values() for e in failed]
        for name in plan.required:
            if name not in self._values and name not in self._invalid:
                errors.append({"type": "missing", "loc": [name], "msg": "Field required"})
        if errors:
            raise InvalidAnswer(describe_answer_errors(plan.label, tuple(errors)), tuple(errors))
        instance = self.model.model_construct(set(self._values), **self._values)
        for validator, takes_info in plan.after:
            try:
                out = (
                    validator(instance, _Info(self.model.model_config))
                    if takes_info
                    else validator(instance)
                )
            except (ValueError, AssertionError) as exc:
                kind = "assertion_error" if isinstance(exc, AssertionError) else "value_error"
                prefix = "Assertion failed" if kind == "assertion_error" else "Value error"
                error = {"type": kind, "loc": [], "msg": f"{prefix}, {exc}"}
                raise InvalidAnswer(
                    describe_answer_errors(plan.label, (error,)), (error,)
                ) from None
            if isinstance(out, self.model):
                instance = out
        return instance

    # --- internals ---

    def _json_part(
        self, mark: JsonMark, ok: bool, value: Any, events: list[FieldDone | FieldInvalid]
    ) -> None:
        raw = mark.text or ""
        entry = self._plan.fields.get(mark.key or "")
        if entry is None or self._seen(entry.name):
            return  # unknown keys are ignored; a repeated key: the first counts
        if not ok:
            errors = (_json_error([entry.key], raw, "value"),)
            self._fail(entry.name, errors, raw, events)
        else:
            self._field(entry.name, entry.key, value, raw, events)

    def _result_end(self, events: list[FieldDone | FieldInvalid]) -> None:
        self._flush(events)

    def _element(self, element: Element, events: list[FieldDone | FieldInvalid]) -> None:
        entry = self._plan.fields.get(element.tag)
        if self._pending is not None and (entry is None or entry.name != self._pending[0]):
            self._flush(events)
        if entry is None or self._seen(entry.name):
            return
        if classify(entry.annotation).kind is Kind.SEQUENCE:
            # A list field may be written as its tag repeated, one item each: it is
            # complete when another field (or the end of the result) follows.
            if self._pending is None:
                self._pending = (entry.name, [])
            self._pending[1].append(element)
            return
        value = element_value(element, entry.annotation)
        self._field(entry.name, entry.key, value, element.raw, events)

    def _flush(self, events: list[FieldDone | FieldInvalid]) -> None:
        """Settle the list field held back, if any."""
        if self._pending is None:
            return
        name, elements = self._pending
        self._pending = None
        entry = self._plan.fields[name]
        if len(elements) == 1:
            value = element_value(elements[0], entry.annotation)
        else:
            args = getattr(classify(entry.annotation).tp, "__args__", ())
            item = args[0] if args else Any
            value = [element_value(element, item) for element in elements]
        self._field(name, entry.key, value, "".join(e.raw for e in elements), events)

    def _field(
        self, name: str, key: str, value: Any, text: str, events: list[FieldDone | FieldInvalid]
    ) -> None:
        """Take one complete field: validate it now, or when the fields it may read are in."""
        self._raw[key] = value
        self._held[name] = (key, value, text)
        self._settle(events, final=False)

    def _seen(self, name: str) -> bool:
        """Whether field ``name`` has come already (a repeated one: the first counts)."""
        return name in self._values or name in self._invalid or name in self._held

    def _settle(self, events: list[FieldDone | FieldInvalid], *, final: bool) -> None:
        """Validate the fields held whose earlier fields have all been settled.

        A field whose validators read ``info.data`` waits for the fields declared before
        it, as in a whole validation; at the end (``final``) it goes with what there is.
        """
        progress = True
        while progress and self._held:
            progress = False
            for name in list(self._held):
                earlier = self._plan.earlier.get(name, ())
                if not final and any(
                    other not in self._values and other not in self._invalid for other in earlier
                ):
                    continue
                key, value, text = self._held.pop(name)
                self._validate(name, key, value, text, events)
                progress = True

    def _validate(
        self, name: str, key: str, value: Any, text: str, events: list[FieldDone | FieldInvalid]
    ) -> None:
        data = tuple(other for other in self._plan.earlier.get(name, ()) if other in self._values)
        payload = {other: self._values[other] for other in data}
        payload[key] = value
        try:
            validated = getattr(self._plan.one_field(name, data).model_validate(payload), name)
        except ValidationError as exc:
            self._fail(name, json_safe_errors(exc), text, events)
            return
        except Exception:
            # A field validator that fails outside validation when checked on its own:
            # the model is validated whole at the end instead.
            self._whole = True
            return
        self._values[name] = validated
        events.append(FieldDone(name, validated))

    def _fail(
        self,
        name: str,
        errors: tuple[dict[str, Any], ...],
        text: str,
        events: list[FieldDone | FieldInvalid],
    ) -> None:
        self._invalid[name] = errors
        message = describe_answer_errors(self._plan.label, errors)
        events.append(FieldInvalid(name, errors, message, text))
