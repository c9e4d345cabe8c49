"""Typed extraction with ``@llm_function``: free text in, validated Pydantic objects out.

Run it as it is (a scripted model plays the LLM, no network, no key)::

    python examples/extract.py

or against any OpenAI-compatible server (needs the ``openai`` extra)::

    python examples/extract.py --base-url http://localhost:8000/v1 --model my-model

Copy the ``Invoice`` model and ``extract_invoice`` into your code and change them to
what you need: the docstring says what to do, the return annotation what to give back.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from decimal import Decimal

from pydantic import BaseModel, Field

from stream_parser import (
    AnswerValidationError,
    ChatModel,
    ModelError,
    OpenAIChatModel,
    RunLimitError,
    llm_function,
)
from stream_parser.decorators import LLMFunction
from stream_parser.testing import ScriptedModel

TEXT = """\
Hi team, invoice INV-2024-117 from Northwind Traders arrived today (dated 3 May 2024).
It covers 12 boxes of printer paper at 4.50 each and 2 toner cartridges at 61.25 each.
Payment is due within 30 days."""


class LineItem(BaseModel):
    """One line of an invoice."""

    description: str
    quantity: int = Field(ge=1)
    unit_price: Decimal = Field(description="price of one unit, without currency")


class Invoice(BaseModel):
    """An invoice, as the text states it."""

    number: str = Field(description="the invoice number, as written")
    supplier: str
    date: datetime.date
    items: list[LineItem]
    payment_terms_days: int | None = Field(default=None, description="days until payment")


# What a model answers to the prompt below: JSON in a fence, with a sentence around it.
SCRIPTED_ANSWER = """Here is the invoice:
```json
{"number": "INV-2024-117", "supplier": "Northwind Traders", "date": "2024-05-03",
 "items": [{"description": "printer paper (box)", "quantity": 12, "unit_price": "4.50"},
           {"description": "toner cartridge", "quantity": 2, "unit_price": "61.25"}],
 "payment_terms_days": 30}
```"""


def make_extractor(model: ChatModel) -> LLMFunction[[str], Invoice]:
    """Build the typed function on the given model."""

    options = None if _scripted(model) else {"temperature": 0, "max_tokens": 800}

    @llm_function(model, model_options=options)
    def extract_invoice(text: str) -> Invoice:
        """Extract the invoice described in the text.

        Use only what the text says; leave a field out when the text does not give it.
        """

    return extract_invoice


def _scripted(model: ChatModel) -> bool:
    return isinstance(model, ScriptedModel)


def main(argv: list[str] | None = None) -> int:
    """Run the example; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. .../v1")
    parser.add_argument("--model", default="local", help="the model name on that server")
    parser.add_argument("--api-key", default="none", help="the server's API key")
    parser.add_argument(
        "--max-retries", type=int, help="retries of a failed request (default: the SDK's, 2)"
    )
    args = parser.parse_args(argv)
    model: ChatModel = (
        OpenAIChatModel(
            args.model,
            base_url=args.base_url,
            api_key=args.api_key,
            max_retries=args.max_retries,
        )
        if args.base_url
        else ScriptedModel([SCRIPTED_ANSWER])
    )
    extract_invoice = make_extractor(model)
    try:
        invoice = extract_invoice.with_details(TEXT)
    except AnswerValidationError as failure:
        print(f"no valid invoice in {len(failure.messages)} messages; last answer:")
        print(failure.answer)
        return 1
    except RunLimitError as failure:
        print(f"the model stopped before answering ({failure.reason}):")
        print(failure.run.output)
        return 1
    except ModelError as failure:
        # The server could not be reached, answered an HTTP error or cut its reply short:
        # say so in one line, with what to check, rather than with a traceback.
        detail = " ".join(str(failure).split())
        print(
            f"{parser.prog}: error: the model server at {args.base_url} failed: {detail}; "
            "is it running? check --base-url and --model",
            file=sys.stderr,
        )
        return 1
    print(json.dumps(invoice.value.model_dump(mode="json"), indent=2))
    total = sum(item.quantity * item.unit_price for item in invoice.value.items)
    print(f"total: {total}  (answers: {invoice.answers}, trace: {invoice.trace_id})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
