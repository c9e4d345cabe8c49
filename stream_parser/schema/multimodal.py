"""Multimodal values: :class:`Text`, :class:`ImgUrl` and :class:`ImgPath`.

These are the types that tools (and later the typed LLM functions) accept as
arguments and return as results.  Each one converts to an OpenAI *content part*
(``{"type": "text", ...}`` or ``{"type": "image_url", ...}``) with
:meth:`~Text.to_content_part`; a local image becomes a ``data:`` URL.

They are also Pydantic-aware: used as a field type they validate from a plain string
(what a model writes), show up in JSON Schema as ``"type": "string"`` and serialise back
to that string.

Path containment
----------------
A path *string* given to an ``ImgPath`` field comes from the model and is untrusted: it
is accepted only inside the allowed image roots, a policy that lives in :mod:`.images`
(``Annotated[ImgPath, ImageRoots(...)]`` pins the roots of one field).  Its names are
re-exported here.

``ImgPath(...)`` called directly by your own code is trusted: it checks only that the
file exists and is an image.  Use :meth:`ImgPath.from_untrusted` for strings from
elsewhere.

Containment also holds when the image is read.  An ``ImgPath`` that was checked against
the roots remembers the root it lies in, and every read (:meth:`ImgPath.read_bytes`,
and so :meth:`~ImgPath.to_base64`, :meth:`~ImgPath.to_data_url` and
:meth:`~ImgPath.to_content_part`) opens the file from that root down without following
symlinks (:func:`~.images.open_within_root`) and reads the bytes from the file it
opened.  A path that was changed after the check so that it leads through a symlink
fails with :class:`PathEscapedError`; the bytes it would have led to are never read.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from .images import (
    PathEscapedError,
    PathNotAllowedError,
    StrPath,
    allowed_image_roots,
    check_within_roots,
    current_image_roots,
    locate_within_roots,
    normalise_roots,
    open_within_root,
    resolve_within_roots,
    set_allowed_image_roots,
)

__all__ = [
    "Detail",
    "ImageRoots",
    "ImgPath",
    "ImgUrl",
    "MultimodalValue",
    "PathEscapedError",
    "PathNotAllowedError",
    "Text",
    "allowed_image_roots",
    "current_image_roots",
    "is_multimodal_annotation",
    "resolve_within_roots",
    "set_allowed_image_roots",
    "to_content_part",
]

Detail = Literal["auto", "low", "high"]
"""The OpenAI ``image_url.detail`` values."""

_DETAILS: frozenset[str] = frozenset({"auto", "low", "high"})


def _check_detail(detail: object) -> Detail:
    if detail not in _DETAILS:
        raise ValueError(f"detail must be 'auto', 'low' or 'high', not {detail!r}")
    return detail  # type: ignore[return-value]


# --- Text --------------------------------------------------------------------------------


def _str_schema(validate: Any) -> core_schema.CoreSchema:
    """Validate with ``validate``; serialise as the value's ``str`` (its URL, path, text)."""
    return core_schema.no_info_plain_validator_function(
        validate,
        serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="always"),
    )


class Text:
    """A piece of text content.

    Args:
        content: the text.

    Raises:
        TypeError: if ``content`` is not a string.
    """

    __slots__ = ("_content",)

    def __init__(self, content: str) -> None:
        if not isinstance(content, str):
            raise TypeError(f"Text content must be a str, not {type(content).__name__}")
        self._content = content

    @property
    def content(self) -> str:
        """The text."""
        return self._content

    def to_content_part(self) -> dict[str, Any]:
        """Return the OpenAI content part ``{"type": "text", "text": ...}``."""
        return {"type": "text", "text": self._content}

    def __str__(self) -> str:
        return self._content

    def __repr__(self) -> str:
        return f"Text({self._content!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Text):
            return NotImplemented
        return self._content == other._content

    def __hash__(self) -> int:
        return hash((Text, self._content))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        def validate(value: Any) -> Text:
            if isinstance(value, Text):
                return value
            if isinstance(value, str):
                return Text(value)
            raise ValueError("expected a string")

        return _str_schema(validate)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string"}


# --- ImgUrl ------------------------------------------------------------------------------


class ImgUrl:
    """An image given by URL: ``http://``, ``https://`` or a ``data:image/...`` URL.

    The URL is not fetched here; it is handed to the model provider as is.

    Args:
        url: the image URL.
        detail: the OpenAI ``detail`` hint, ``"auto"`` (default), ``"low"`` or ``"high"``.

    Raises:
        ValueError: if the URL has another scheme, no host, or is a ``data:`` URL that is
            not an image.
    """

    __slots__ = ("_detail", "_url")

    def __init__(self, url: str, detail: Detail = "auto") -> None:
        self._url = _check_url(url)
        self._detail: Detail = _check_detail(detail)

    @property
    def url(self) -> str:
        """The URL."""
        return self._url

    @property
    def detail(self) -> Detail:
        """The OpenAI ``detail`` hint."""
        return self._detail

    def to_content_part(self) -> dict[str, Any]:
        """Return the OpenAI content part ``{"type": "image_url", "image_url": {...}}``."""
        return {"type": "image_url", "image_url": {"url": self._url, "detail": self._detail}}

    def __str__(self) -> str:
        return self._url

    def __repr__(self) -> str:
        shown = self._url if len(self._url) <= 80 else self._url[:77] + "..."
        return f"ImgUrl({shown!r}, detail={self._detail!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImgUrl):
            return NotImplemented
        return (self._url, self._detail) == (other._url, other._detail)

    def __hash__(self) -> int:
        return hash((ImgUrl, self._url, self._detail))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        def validate(value: Any) -> ImgUrl:
            if isinstance(value, ImgUrl):
                return value
            if isinstance(value, str):
                return ImgUrl(value)
            if isinstance(value, Mapping) and isinstance(value.get("url"), str):
                return ImgUrl(value["url"], value.get("detail", "auto"))
            raise ValueError("expected an image URL string")

        return _str_schema(validate)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "format": "uri",
            "description": "Image URL (http, https or data:image/...)",
        }


def _check_url(url: object) -> str:
    if not isinstance(url, str):
        raise TypeError(f"image URL must be a str, not {type(url).__name__}")
    lowered = url[:16].lower()
    if lowered.startswith("data:"):
        if not lowered.startswith("data:image/") or "," not in url:
            raise ValueError("a data URL for an image must start with 'data:image/'")
        return url
    if not lowered.startswith(("http://", "https://")):
        raise ValueError("image URL must start with http://, https:// or data:")
    if any(ch.isspace() for ch in url) or not urlsplit(url).netloc:
        raise ValueError(f"not a valid image URL: {url[:200]!r}")
    return url


class ImageRoots:
    """Field metadata that pins the allowed roots of an ``ImgPath`` field.

    ``Annotated[ImgPath, ImageRoots("assets")]`` accepts only images under ``assets``,
    whatever the ambient setting.  Such a field also re-checks ``ImgPath`` instances
    given to it, so a value converted elsewhere cannot bypass the pin.

    Args:
        *roots: the allowed directories (resolved now); relative paths given by a model
            are taken relative to the first.
    """

    __slots__ = ("roots",)

    def __init__(self, *roots: StrPath) -> None:
        self.roots: tuple[Path, ...] = normalise_roots(roots)

    def __repr__(self) -> str:
        return f"ImageRoots({', '.join(repr(str(root)) for root in self.roots)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageRoots):
            return NotImplemented
        return self.roots == other.roots

    def __hash__(self) -> int:
        return hash((ImageRoots, self.roots))

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        if source is not ImgPath:
            raise TypeError(f"ImageRoots applies to ImgPath fields only, not {source!r}")
        return ImgPath._core_schema(self.roots)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return ImgPath.__get_pydantic_json_schema__(schema, handler)


# --- ImgPath -----------------------------------------------------------------------------

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def _sniff_image_type(head: bytes, name: str) -> str | None:
    """Return the image MIME type from the file's first bytes, else from its name."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    guessed, _ = mimetypes.guess_type(name)
    if guessed is not None and guessed.startswith("image/"):
        return guessed
    return None


def _read_regular_file(path: Path, root: Path | None, limit: int = -1) -> bytes:
    """Read a file opened with :func:`open_within_root`, from that very file.

    Args:
        path: the resolved path.
        root: the root it was checked against, or None for a trusted path.
        limit: read at most this many bytes (``-1``: all of it).

    Raises:
        PathEscapedError: the path now leads through a symlink (see
            :func:`open_within_root`).
        IsADirectoryError: it is a directory.
        OSError: it cannot be opened or read, or is not a regular file.
    """
    fd = open_within_root(path, root)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"image path {path.name!r} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"image path {path.name!r} is not a regular file")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        return handle.read(limit)


def _inspect_image(resolved: Path, root: Path | None, shown: str) -> str:
    """Check that ``resolved`` is an image file and return its MIME type."""
    try:
        head = _read_regular_file(resolved, root, 16)
    except PathNotAllowedError:
        raise
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"image file not found: {shown!r}") from None
    except IsADirectoryError:
        raise ValueError(f"not a regular file: {shown!r}") from None
    except OSError as exc:
        # errno None: ours, for a FIFO or a device; Windows cannot open a directory.
        if exc.errno is None or resolved.is_dir():
            raise ValueError(f"not a regular file: {shown!r}") from None
        raise
    mime = _sniff_image_type(head, resolved.name)
    if mime is None:
        raise ValueError(f"not an image file: {shown!r}")
    return mime


class ImgPath:
    """A local image file.

    Args:
        path: the file's path; stored resolved (absolute, symlinks followed).
        detail: the OpenAI ``detail`` hint, ``"auto"`` (default), ``"low"`` or ``"high"``.

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: if it is not a regular file or not an image (by magic bytes or, failing
            that, by extension).

    Calling the constructor trusts ``path``.  For a path chosen by a model use
    :meth:`from_untrusted`, which Pydantic validation of a string does too.  An image
    made that way (or re-checked by a field whose roots are pinned) is read from its root
    down without following symlinks, so the check still holds when the file is read.
    """

    __slots__ = ("_detail", "_mime_type", "_path", "_root")

    def __init__(self, path: StrPath, detail: Detail = "auto") -> None:
        resolved = Path(path).resolve()
        self._mime_type = _inspect_image(resolved, None, os.fspath(path))
        self._path = resolved
        self._root: Path | None = None
        self._detail: Detail = _check_detail(detail)

    @classmethod
    def from_untrusted(
        cls,
        path: StrPath,
        detail: Detail = "auto",
        *,
        roots: Iterable[StrPath] | None = None,
    ) -> ImgPath:
        """Build an ``ImgPath`` from a path that may have been chosen by a model.

        Args:
            path: the untrusted path.
            detail: the OpenAI ``detail`` hint.
            roots: the allowed directories; default :func:`current_image_roots`.

        Returns:
            The image, whose path lies inside one of the roots.

        Raises:
            PathNotAllowedError: if the path resolves outside the roots (or, as
                :class:`PathEscapedError`, if it was changed while being checked).
            ValueError: if the file is missing, not a file, or not an image.  (Unlike the
                constructor, a missing file is a ``ValueError`` here, so that Pydantic
                reports it as a validation error.)
        """
        root, resolved = locate_within_roots(path, roots)
        shown = os.fspath(path)
        try:
            mime = _inspect_image(resolved, root, shown)
        except PathNotAllowedError:
            raise
        except OSError as exc:
            reason = "does not exist" if isinstance(exc, FileNotFoundError) else "cannot be read"
            raise ValueError(f"image file {shown!r} {reason}") from None
        return cls._make(resolved, root, mime, _check_detail(detail))

    @classmethod
    def _make(cls, path: Path, root: Path | None, mime: str, detail: Detail) -> ImgPath:
        image = cls.__new__(cls)
        image._path = path
        image._root = root
        image._mime_type = mime
        image._detail = detail
        return image

    @property
    def path(self) -> Path:
        """The resolved absolute path."""
        return self._path

    @property
    def detail(self) -> Detail:
        """The OpenAI ``detail`` hint."""
        return self._detail

    @property
    def mime_type(self) -> str:
        """The image's MIME type, e.g. ``"image/png"``."""
        return self._mime_type

    def get_mime_type(self) -> str:
        """The image's MIME type, as :attr:`mime_type` (a method, for code that calls one)."""
        return self._mime_type

    @property
    def root(self) -> Path | None:
        """The allowed root the path was checked against, or None if trusted code made it.

        Reads open the file from this root down without following symlinks.
        """
        return self._root

    def read_bytes(self) -> bytes:
        """Read the image file's bytes.

        An image checked against the allowed roots is opened from its root down without
        following any symlink (see :mod:`.images`), and its bytes are read from the file
        that was opened.

        Raises:
            PathEscapedError: the path was changed after it was checked and now leads
                through a symlink (the file it leads to is not read).
            OSError: the file can no longer be read, or is no longer a regular file.
        """
        return _read_regular_file(self._path, self._root)

    def to_base64(self) -> str:
        """Read the file (:meth:`read_bytes`) and return its bytes base64-encoded (ASCII).

        Raises:
            PathEscapedError: as :meth:`read_bytes`.
            OSError: if the file can no longer be read.
        """
        return base64.b64encode(self.read_bytes()).decode("ascii")

    def to_data_url(self) -> str:
        """Return the image as a ``data:<mime>;base64,...`` URL.

        Raises:
            PathEscapedError: as :meth:`read_bytes`.
            OSError: if the file can no longer be read.
        """
        return f"data:{self._mime_type};base64,{self.to_base64()}"

    def to_content_part(self) -> dict[str, Any]:
        """Return an OpenAI ``image_url`` content part carrying the image as a data URL.

        Raises:
            PathEscapedError: as :meth:`read_bytes`.
            OSError: if the file can no longer be read.
        """
        return {
            "type": "image_url",
            "image_url": {"url": self.to_data_url(), "detail": self._detail},
        }

    def __str__(self) -> str:
        return str(self._path)

    def __fspath__(self) -> str:
        return str(self._path)

    def __repr__(self) -> str:
        return f"ImgPath({str(self._path)!r}, detail={self._detail!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImgPath):
            return NotImplemented
        return (self._path, self._detail) == (other._path, other._detail)

    def __hash__(self) -> int:
        return hash((ImgPath, self._path, self._detail))

    @classmethod
    def _core_schema(cls, pinned: tuple[Path, ...] | None) -> core_schema.CoreSchema:
        """Validation schema; ``pinned`` roots (from ``ImageRoots``) override the ambient ones."""

        def validate(value: Any) -> ImgPath:
            if isinstance(value, ImgPath):
                if pinned is None:
                    return value
                root = check_within_roots(value.path, pinned)
                if value._root == root:
                    return value
                # Bound to the pinned root, so that reading it holds the pin too.
                return cls._make(value._path, root, value._mime_type, value._detail)
            if isinstance(value, (str, os.PathLike)):
                return cls.from_untrusted(value, roots=pinned)
            raise ValueError("expected a file path string")

        return _str_schema(validate)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return cls._core_schema(None)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string", "description": "Path of a local image file"}


# --- helpers -----------------------------------------------------------------------------

MultimodalValue: TypeAlias = Text | ImgUrl | ImgPath
"""Any of the multimodal value types."""

_MULTIMODAL = (Text, ImgUrl, ImgPath)


def is_multimodal_annotation(annotation: Any) -> bool:
    """Tell whether an annotation is, or contains, ``Text``, ``ImgUrl`` or ``ImgPath``.

    Looks through ``Annotated``, ``Optional`` / unions and containers (``list[ImgPath]``,
    ``dict[str, ImgUrl]``...), but not into the fields of nested models.

    Args:
        annotation: a type annotation.

    Returns:
        True if a multimodal type appears in it.
    """
    if annotation in _MULTIMODAL:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return is_multimodal_annotation(get_args(annotation)[0])
    if origin is Literal:
        return False
    return any(is_multimodal_annotation(arg) for arg in get_args(annotation))


def to_content_part(value: str | MultimodalValue) -> dict[str, Any]:
    """Convert a string or a multimodal value to an OpenAI content part.

    Args:
        value: a ``str`` (becomes a text part), :class:`Text`, :class:`ImgUrl` or
            :class:`ImgPath` (becomes an ``image_url`` part with a data URL).

    Returns:
        The content part dict.

    Raises:
        TypeError: for any other value.
        OSError: if an ``ImgPath`` can no longer be read.
    """
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, _MULTIMODAL):
        return value.to_content_part()
    raise TypeError(f"cannot convert {type(value).__name__} to a content part")
