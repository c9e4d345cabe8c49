"""The typed functions' other small names, as callers of other typed-function APIs use them."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from stream_parser import AnswerValidationError, llm_function
from stream_parser.schema.multimodal import ImgPath
from stream_parser.testing import ScriptedModel

# A 1x1 PNG and the first bytes of a JPEG: the type is read from the bytes.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32


def test_a_spent_answer_is_caught_as_a_value_error() -> None:
    @llm_function(ScriptedModel(["many", "lots", "plenty"]), retry_times=2)
    def count(text: str) -> int:
        """Count the words of the text."""

    try:
        count("one two three")
    except ValueError as error:  # how such callers catch it
        caught: BaseException = error
    else:  # pragma: no cover - the assertion below reports it
        caught = AssertionError("no error")
    assert isinstance(caught, AnswerValidationError)
    assert caught.answer == "plenty"


@pytest.mark.parametrize(
    ("name", "data", "mime"), [("a.png", PNG, "image/png"), ("b.jpg", JPEG, "image/jpeg")]
)
def test_an_image_path_gives_its_mime_type_by_a_method(
    tmp_path: Path, name: str, data: bytes, mime: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    image = ImgPath(path)
    # A data URL built by hand from a tool's image result.
    data_url = f"data:{image.get_mime_type()};base64,{image.to_base64()}"
    assert image.get_mime_type() == image.mime_type == mime
    assert data_url == image.to_data_url()
