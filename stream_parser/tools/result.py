"""What a tool call gives back to the model: :class:`ToolResult`.

Running a tool never raises for what the model or the tool's own code did: the return
value, an exception raised inside the tool, invalid arguments or an unknown tool name
each become a :class:`ToolResult`, whose text is written for the model to read and act
on (invalid arguments are worded by :func:`~stream_parser.schema.validation.describe_errors`,
exactly as the parser words an invalid call).

Building that text never fails either.  An exception is described without trusting it:
its class name is read from the type itself (a metaclass cannot fake it), its message
from ``str()``, else from ``BaseException.__str__`` (its arguments), else from
``BaseException.__repr__``, and a placeholder when all of them raise or return
something that is not a string.  A value is described by its class name the same way.
Whatever text results is an exact ``str`` that encodes to UTF-8: lone surrogates (from
a message, a return value or a JSON string) become U+FFFD, so the text can always be
sent to a model.

Which exceptions become results: every ``BaseException`` raised by a tool, except the
four that steer the program rather than report a failure -- ``KeyboardInterrupt``,
``SystemExit``, ``GeneratorExit`` and ``asyncio.CancelledError`` (and an exception
group holding any of them) -- which propagate unchanged, even when one is raised while
an exception or a value is being described.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import dataclasses
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json, to_jsonable_python

from ..core.events import ErrorType
from ..schema.multimodal import ImgPath, ImgUrl, Text
from ..schema.validation import describe_errors, json_safe_errors

__all__ = ["ToolResult"]

_IMAGE_TYPES = (ImgUrl, ImgPath)
_PART_TYPES = (str, Text, ImgUrl, ImgPath)

# --- describing what cannot be trusted ---------------------------------------------------

# Exceptions that steer the program (stop it, cancel a task, close a generator) rather
# than report that the tool failed: never turned into results.
_CONTROL_FLOW: tuple[type[BaseException], ...] = (
    KeyboardInterrupt,
    SystemExit,
    GeneratorExit,
    asyncio.CancelledError,
)
# Python 3.11+; looked up so that the module still imports on 3.10.
_BASE_EXCEPTION_GROUP: Any = getattr(builtins, "BaseExceptionGroup", None)
_SURROGATES = re.compile("[\ud800-\udfff]")
# The type's own name slot: a metaclass may shadow ``__name__`` on a class, not this.
_TYPE_NAME: Any = type.__dict__["__name__"]
_UNSHOWABLE = "(its message could not be shown)"


def _is_control_flow(exc: BaseException) -> bool:
    """Tell whether an exception steers the program and must not become a result.

    True for ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``,
    ``asyncio.CancelledError`` (and their subclasses), and for an exception group that
    holds any of them.  Every other exception a tool raises, ``BaseException``
    subclasses included, becomes a ``tool_exception`` result.

    Args:
        exc: the exception raised.

    Returns:
        Whether to let it propagate.
    """
    # type(), not isinstance(): an object can claim any class through ``__class__``.
    kind = type(exc)
    if issubclass(kind, _CONTROL_FLOW):
        return True
    if _BASE_EXCEPTION_GROUP is not None and issubclass(kind, _BASE_EXCEPTION_GROUP):
        try:
            matched, _rest = exc.split(_CONTROL_FLOW)  # type: ignore[attr-defined]
        except Exception:
            # A group that cannot even be split is reported, not obeyed.
            return False
        return matched is not None
    return False


def _valid_text(text: str) -> str:
    """Return ``text`` as an exact ``str`` that encodes to UTF-8.

    Lone surrogates (which a JSON string, a file name or a message can hold, but no
    request to a model can carry) become U+FFFD; an instance of a ``str`` subclass
    becomes a plain ``str`` with the same characters.

    Args:
        text: any string.

    Returns:
        The string, safe to send.

    Raises:
        TypeError: ``text`` is not a string.
    """
    plain = str.__str__(text)  # an exact str even from a subclass, without calling it
    try:
        plain.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", plain)
    return plain


def _attempt(render: Callable[[Any], object], value: Any) -> str | None:
    """``render(value)`` if it gives a string; None if it raises or gives anything else."""
    try:
        out = render(value)
    except BaseException as exc:
        if _is_control_flow(exc):
            raise
        return None
    if not isinstance(out, str):
        return None
    try:
        return _valid_text(out)
    except Exception:
        return None


def _class_name(value: object, default: str) -> str:
    """The name of ``value``'s class, read so that nothing can make it raise.

    Args:
        value: any object.
        default: the name to give when the class's name is empty.

    Returns:
        The class's ``__name__`` as the type stores it, else ``default``.
    """
    return _attempt(_TYPE_NAME.__get__, type(value)) or default


def _exception_message(exc: BaseException) -> str:
    """An exception's message, read so that nothing the exception does can make it raise.

    Tries ``str(exc)``, then ``BaseException.__str__`` (which shows its arguments, for a
    class whose ``__str__`` is broken), then ``BaseException.__repr__``; a placeholder
    when each raises or returns something other than a string.  The result is made
    valid by :func:`_valid_text`.

    Args:
        exc: the exception.

    Returns:
        The message (``""`` for an exception raised without one).
    """
    for render in (str, BaseException.__str__, BaseException.__repr__):
        message = _attempt(render, exc)
        if message is not None:
            return message
    return _UNSHOWABLE


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What a tool call gives back to the model.

    Attributes:
        tool_name: the tool that was called.
        text: the text for the model (a string result as is, other values as JSON, or the
            error message); always an exact ``str`` that encodes to UTF-8, however the
            result was made (lone surrogates become U+FFFD; a text that is not a string
            at all raises ``TypeError``).
        images: OpenAI ``image_url`` content parts (a local image as a data URL).
        is_error: whether the call failed.
        error_type: ``"invalid_params"``, ``"tool_exception"``, ``"invalid_result"``
            or ``"unknown_tool"`` for an error, else None.
        exception_type: the exception's class name for ``tool_exception``.
        details: Pydantic's errors (``loc``, ``msg``, ``type``) for ``invalid_params``.
        value: the tool's return value (not compared, not shown).
        exception: the exception raised, if any (not compared, not shown).
    """

    tool_name: str
    text: str
    images: tuple[dict[str, Any], ...] = ()
    is_error: bool = False
    error_type: str | None = None
    exception_type: str | None = None
    details: tuple[dict[str, Any], ...] = ()
    value: Any = dataclasses.field(default=None, compare=False, repr=False)
    exception: BaseException | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Whoever built it, the text is something a model can be sent (see _valid_text).
        if not isinstance(self.text, str):
            raise TypeError(f"ToolResult text must be a str, not {type(self.text).__name__}")
        object.__setattr__(self, "text", _valid_text(self.text))

    def __str__(self) -> str:
        return self.text

    @classmethod
    def from_value(cls, tool_name: str, value: Any) -> ToolResult:
        """Convert a tool's return value (never raises).

        * ``str`` -> the text; :class:`Text` -> its content;
        * :class:`ImgUrl` / :class:`ImgPath` -> an image part (a local file is read and sent
          as a data URL) with a short text;
        * a tuple or list of ``str`` / ``Text`` / images with at least one ``Text`` or image,
          such as ``(caption, ImgPath)`` -> the texts joined by newlines, and the images;
        * anything else -> JSON (via Pydantic, so models, dataclasses, dates and enums
          work); a value that cannot be serialised gives an ``invalid_result`` error,
          whatever its serialisation, ``__str__`` or ``__repr__`` raise.  An image that
          can no longer be read (or whose path now leads out of its root: see
          :class:`~stream_parser.schema.images.PathEscapedError`) is such a value.

        Lone surrogates in the text (or in the strings of the JSON) become U+FFFD.

        Args:
            tool_name: the tool that returned it.
            value: the return value.

        Returns:
            The result.
        """
        try:
            if isinstance(value, ToolResult):  # a handler that made its own result
                if value.tool_name == tool_name:
                    return value
                return dataclasses.replace(value, tool_name=tool_name)
            if isinstance(value, str):
                return cls(tool_name=tool_name, text=value, value=value)
            if isinstance(value, Text):
                return cls(tool_name=tool_name, text=value.content, value=value)
            if isinstance(value, _IMAGE_TYPES):
                return cls(
                    tool_name=tool_name,
                    text=f"Tool {tool_name!r} returned an image.",
                    images=(value.to_content_part(),),
                    value=value,
                )
            if (
                isinstance(value, (tuple, list))
                and value
                and all(isinstance(item, _PART_TYPES) for item in value)
                and any(not isinstance(item, str) for item in value)
            ):
                # Not str(item): a str subclass may override __str__ (and make it raise).
                texts = [
                    item.content if isinstance(item, Text) else _valid_text(item)
                    for item in value
                    if isinstance(item, (str, Text))
                ]
                images = tuple(
                    item.to_content_part() for item in value if isinstance(item, _IMAGE_TYPES)
                )
                return cls(tool_name=tool_name, text="\n".join(texts), images=images, value=value)
            return cls(tool_name=tool_name, text=_to_json(value), value=value)
        except BaseException as exc:
            if _is_control_flow(exc):
                raise
            return cls(
                tool_name=tool_name,
                text=(
                    f"Error: tool {tool_name!r} returned a value that cannot be sent back "
                    f"({_class_name(value, 'object')}): {_exception_message(exc)}"
                ),
                is_error=True,
                error_type=ErrorType.INVALID_RESULT.value,
                value=value,
                exception=exc,
            )

    @classmethod
    def from_mcp(cls, tool_name: str, result: Any) -> ToolResult:
        """Convert an MCP ``tools/call`` result (never raises).

        ``result`` is the mcp SDK's ``CallToolResult`` or its JSON form (a dict; the
        fields are read under their Python and their JSON names):

        * text content becomes the text, several parts joined by newlines in order;
        * image content becomes an image part (a ``data:`` URL of its ``data`` and
          ``mime_type``);
        * ``structured_content`` becomes ``value``, and the text (as JSON) when there is
          no text content;
        * ``is_error`` makes an error result (``tool_exception``) carrying the text;
        * other content (audio, ``resource``, ``resource_link``...) becomes a short line
          naming its type, URI and MIME type.

        A result of another shape gives an ``invalid_result`` error naming what was
        wrong.

        Args:
            tool_name: the tool called (as the model knows it).
            result: the server's answer.

        Returns:
            The result.
        """
        try:
            return cls._from_mcp(tool_name, result)
        except BaseException as exc:
            if _is_control_flow(exc):
                raise
            return cls(
                tool_name=tool_name,
                text=(
                    f"Error: tool {tool_name!r} returned a result that is not an MCP "
                    f"tool result ({_class_name(result, 'object')}): {_exception_message(exc)}"
                ),
                is_error=True,
                error_type=ErrorType.INVALID_RESULT.value,
                value=result,
                exception=exc,
            )

    @classmethod
    def _from_mcp(cls, tool_name: str, result: Any) -> ToolResult:
        content = _field(result, "content", "content")
        if content is None:
            content = []
        if not isinstance(content, (list, tuple)):
            raise TypeError(f"its content is a {_class_name(content, 'object')}, not a list")
        structured = _field(result, "structured_content", "structuredContent")
        is_error = _field(result, "is_error", "isError") is True
        texts: list[str] = []
        images: list[dict[str, Any]] = []
        others: list[str] = []
        for part in content:
            kind = _field(part, "type", "type")
            if kind == "text" and isinstance(_field(part, "text", "text"), str):
                texts.append(_valid_text(_field(part, "text", "text")))
            elif kind == "image" and isinstance(_field(part, "data", "data"), str):
                mime = _field(part, "mime_type", "mimeType") or "application/octet-stream"
                url = f"data:{mime};base64,{_field(part, 'data', 'data')}"
                images.append({"type": "image_url", "image_url": {"url": url}})
            else:
                others.append(_describe_mcp_part(kind, part))
        if texts:
            text = "\n".join(texts)
        elif structured is not None:
            text = _to_json(structured)
        elif images and not others:
            text = f"Tool {tool_name!r} returned {'an image' if len(images) == 1 else 'images'}."
        else:
            text = ""
        text = "\n".join(part for part in (text, *others) if part)
        return cls(
            tool_name=tool_name,
            text=text,
            images=tuple(images),
            is_error=is_error,
            error_type=ErrorType.TOOL_EXCEPTION.value if is_error else None,
            value=structured,
        )

    @classmethod
    def from_exception(cls, tool_name: str, exc: BaseException) -> ToolResult:
        """Make the error result for an exception raised by a tool.

        Args:
            tool_name: the tool that raised.
            exc: the exception.

        Returns:
            A ``tool_exception`` result whose text names the exception type and message
            (read as the module docstring says, so an exception whose ``__str__`` or
            ``__repr__`` raises, or returns something other than a string, still gives
            one).
        """
        kind = _class_name(exc, "Exception")
        message = _exception_message(exc)
        detail = f"{kind}: {message}" if message else kind
        return cls(
            tool_name=tool_name,
            text=f"Error: tool {tool_name!r} raised {detail}",
            is_error=True,
            error_type=ErrorType.TOOL_EXCEPTION.value,
            exception_type=kind,
            exception=exc,
        )

    @classmethod
    def from_validation_error(
        cls, tool_name: str, exc: ValidationError, known_params: Iterable[str] = ()
    ) -> ToolResult:
        """Make the error result for arguments that failed validation.

        Args:
            tool_name: the tool called.
            exc: Pydantic's error.
            known_params: the tool's parameter names, listed when an unknown one was given.

        Returns:
            An ``invalid_params`` result whose text is
            :func:`~stream_parser.schema.validation.describe_errors`'s: one line per
            error naming the field and the reason, worded exactly as the parser words an
            invalid call, and the known parameters when an unknown one was given.
        """
        errors = exc.errors(include_url=False)
        try:
            safe = json_safe_errors(exc)
        except BaseException as failure:
            if _is_control_flow(failure):
                raise
            # An input (given by the caller, not a model) that cannot even be turned into
            # text: word the errors without their inputs.
            safe = tuple(
                dict(error)
                for error in exc.errors(
                    include_url=False, include_input=False, include_context=False
                )
            )
        text = describe_errors(tool_name, safe, known_params)
        details = tuple(
            {"loc": list(error.get("loc", ())), "msg": error.get("msg", ""), "type": error["type"]}
            for error in errors
        )
        return cls(
            tool_name=tool_name,
            text=text,
            is_error=True,
            error_type=ErrorType.INVALID_PARAMS.value,
            details=details,
            exception=exc,
        )

    @classmethod
    def unknown_tool(cls, tool_name: str, available: Iterable[str] = ()) -> ToolResult:
        """Make the error result for a call to a tool that does not exist.

        Args:
            tool_name: the name the model used.
            available: the registered names, listed in the text.

        Returns:
            An ``unknown_tool`` result.
        """
        names = ", ".join(available) or "(none)"
        return cls(
            tool_name=tool_name,
            text=f"Error: there is no tool named {tool_name!r}. Available tools: {names}.",
            is_error=True,
            error_type=ErrorType.UNKNOWN_TOOL.value,
        )

    @property
    def content(self) -> str | list[dict[str, Any]]:
        """The text alone, or (with images) the list of content parts."""
        return self.content_parts() if self.images else self.text

    def content_parts(self) -> list[dict[str, Any]]:
        """Return OpenAI content parts: a text part (if there is text), then the images."""
        parts: list[dict[str, Any]] = [{"type": "text", "text": self.text}] if self.text else []
        return [*parts, *(copy.deepcopy(image) for image in self.images)]

    def to_openai_messages(self, tool_call_id: str) -> list[dict[str, Any]]:
        """Return the chat messages that answer a native tool call.

        OpenAI tool messages carry text only, so images follow in a ``user`` message.

        Args:
            tool_call_id: the id of the call being answered.

        Returns:
            ``[{"role": "tool", ...}]``, plus ``{"role": "user", ...}`` when there are
            images.
        """
        messages: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": tool_call_id, "content": self.text}
        ]
        if self.images:
            intro = {"type": "text", "text": f"Image(s) returned by tool {self.tool_name!r}:"}
            messages.append(
                {"role": "user", "content": [intro, *(copy.deepcopy(i) for i in self.images)]}
            )
        return messages


def _field(item: Any, name: str, json_name: str) -> Any:
    """A field of an mcp SDK object (``name``) or of its JSON form (``json_name``)."""
    if isinstance(item, dict):
        return item.get(json_name, item.get(name))
    return getattr(item, name, None)


def _describe_mcp_part(kind: object, part: Any) -> str:
    """One line for MCP content that is neither text nor an image: its type, URI, MIME."""
    resource = _field(part, "resource", "resource")
    source = resource if resource is not None else part
    uri = _field(source, "uri", "uri")
    mime = _field(source, "mime_type", "mimeType")
    words = [f"[{kind if isinstance(kind, str) else 'unknown'} content"]
    if uri is not None:
        words.append(f"at {_valid_text(str(uri))}")
    if isinstance(mime, str):
        words.append(f"({_valid_text(mime)})")
    return " ".join(words) + "]"


def _to_json(value: Any) -> str:
    """Compact JSON of a return value, its lone surrogates made U+FFFD.

    Pydantic's encoder refuses a string holding a lone surrogate; such a string (say, a
    file name or text the model sent) is still worth showing.  So on failure the plain
    containers are rebuilt with such strings made valid and encoded again, and failing
    that (a surrogate inside a model's field) the JSON-ready data is written by
    :mod:`json`, which keeps surrogates, and the text made valid by ``__post_init__``.
    """
    try:
        return to_json(value).decode()
    except Exception as first:
        try:
            return to_json(_scrub(value)).decode()
        except Exception:
            pass
        try:
            data = to_jsonable_python(value)
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except Exception:
            raise first from None


def _scrub(value: Any) -> Any:
    """``value`` with lone surrogates replaced in its strings and plain containers."""
    kind = type(value)
    if kind is str:
        return _valid_text(value)
    if kind is list or kind is tuple:
        return kind(_scrub(item) for item in value)
    if kind is dict:
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    return value
