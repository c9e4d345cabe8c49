r"""Which dialect a served model speaks, from its name.

A server names its model the way its user loaded it: a Hugging Face repository
(``Qwen/Qwen3-8B``), a GGUF file's repository (``hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M``), an
Ollama tag (``qwen3:8b``) or an alias.  :func:`dialect_for_model` reads the family out of
that name and answers with a :class:`ModelDialect`: the dialect the family's chat
template writes tool calls in, and how the model writes its reasoning.  ``"auto"`` in
``ReActAgent(dialect=...)``, ``@llm_function(protocol=...)`` and the command line's
``--dialect`` goes through it.

Theory of operation.  The name is lowercased and cut to its last path segment (the
organisation and ``hf.co/owner/`` prefixes say nothing about the format; a GGUF
re-packager's name would mislead), and the patterns of :data:`MODEL_PATTERNS` are tried
in order; the first that matches anywhere in it wins.  Each pattern is part of its
dialect's record on the registry (the built-in ones are known before any dialect loads),
with an explicit priority that orders the table from the most specific to the most
general, because names nest: ``qwen3-coder`` before ``qwen3``,
``deepseek-r1-distill-qwen`` (a Qwen model trained on DeepSeek's template) before
``qwen``, ``hermes-3-llama-3.1`` before ``llama``.  The separators between a family's
name and its version vary (``llama3.1``, ``Llama-3.1``, ``llama_3_1``), so the patterns
accept any of ``-``, ``_``, ``.``, a space or nothing there.  A name that no pattern
matches gives None: guessing a format would make every call in the reply plain text.

The table (first match wins):

=====================================  ===============  =====================  =========
model name contains                    dialect          reasoning              prefilled
=====================================  ===============  =====================  =========
``deepseek-r1`` (and its distills)     ``deepseek``     ``<think>…</think>``   yes
``deepseek-v3``, ``deepseek`` …        ``deepseek``     ``<think>…</think>``   no
``gpt-oss``                            ``gpt_oss``      (harmony channels)     no
``olmo-3…think``                       ``pythonic``     ``<think>…</think>``   yes
``olmo-3``                             ``pythonic``     none                   no
``lfm2``, ``lfm2.5``                   ``pythonic``     ``<think>…</think>``   no
``minimax-m2`` (M2, M2.1, M2.5)        ``minimax_m2``   ``<think>…</think>``   yes
``seed-oss``                           ``seed_oss``     ``<seed:think>…``      no
``hunyuan-a13b``                       ``hunyuan``      ``<think>…</think>``   no
``ernie-4.5…thinking`` (not VL)        ``ernie``        ``<think>…</think>``   yes
``longcat-flash-chat``                 ``longcat``      none                   no
``qwen3-coder``                        ``qwen3_coder``  none                   no
``qwen3.5`` … ``qwen3.9``              ``qwen3_coder``  ``<think>…</think>``   no
``qwen3…thinking``                     ``hermes``       ``<think>…</think>``   yes
``qwen3…instruct-2507``                ``hermes``       none                   no
``qwq``                                ``hermes``       ``<think>…</think>``   yes
``qwen3`` (``qwen3-8b``, ``qwen3-vl``) ``hermes``       ``<think>…</think>``   no
``qwen2.5``, ``qwen2``                 ``hermes``       none                   no
``hermes-4``                           ``hermes``       ``<think>…</think>``   no
``hermes-2-pro``, ``hermes-3``         ``hermes``       none                   no
``gemma-4``                            ``gemma4``       ``<|channel>thought``  no
                                                        ``…<channel|>``
``kimi-k2…thinking``                   ``kimi``         ``<think>…</think>``   yes
``kimi-k2``                            ``kimi``         none                   no
``kimi-k3`` and later                  ``kimi``         K3's think channel     no
``glm-4.5`` / ``4.6`` / ``4.7``,       ``glm``          ``<think>…</think>``   no
``glm-z1``, ``glm-5`` and later
``glm-4``, ``glm4``                    ``glm``          none                   no
``magistral``                          ``mistral``      ``[THINK]…[/THINK]``   no
``mistral``, ``ministral``,            ``mistral``      none                   no
``mixtral``, ``devstral``,
``codestral``
``llama-3.x``, ``llama-4``             ``llama``        none                   no
=====================================  ===============  =====================  =========

*Prefilled* means the family's chat template writes the opening tag itself, so the
reply starts inside reasoning and shows only the closing tag.  gpt-oss writes its
reasoning in harmony's ``analysis`` channel, which its dialect reads itself: it has no
tag pair here.

Example:
    >>> dialect_for_model("Qwen/Qwen3-Coder-30B-A3B-Instruct").dialect
    'qwen3_coder'
    >>> dialect_for_model("llama3.1:8b").dialect
    'llama'
    >>> dialect_for_model("my-finetune") is None
    True
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, overload

from ..core.config import DEFAULT_THINKING_TAGS, ParserConfig
from ..core.kit import ModelPattern, dialect_names, dialect_thinking, model_patterns
from ..errors import ConfigError

__all__ = [
    "MODEL_PATTERNS",
    "ModelDialect",
    "dialect_for_model",
    "model_name_of",
    "resolve_model_dialect",
    "with_reasoning",
]


@dataclass(frozen=True, slots=True)
class ModelDialect:
    """What :func:`dialect_for_model` found for a model name.

    Attributes:
        dialect: the name of the dialect its tool calls are written in, as
            ``ParserConfig(dialect=...)`` takes it (it may not be available in this
            version: see :func:`resolve_model_dialect`).
        reasoning: the ``(start, end)`` tags around its reasoning, or None when the
            model writes no reasoning in tags (the parser's thinking tags are then left
            as they are).
        prefilled_reasoning: the chat template writes the opening tag itself, so the
            reply starts inside reasoning (``ParserConfig.start_in_thinking``).

    Example:
        >>> found = dialect_for_model("deepseek-ai/DeepSeek-R1")
        >>> found.dialect, found.reasoning, found.prefilled_reasoning
        ('deepseek', ('<think>', '</think>'), True)
    """

    dialect: str
    reasoning: tuple[str, str] | None = None
    prefilled_reasoning: bool = False


class _ModelPatterns(Sequence[tuple[re.Pattern[str], ModelDialect]]):
    """``(pattern, result)`` pairs in the order they are tried: a view of the registry."""

    def _pairs(self) -> tuple[tuple[re.Pattern[str], ModelDialect], ...]:
        return _pairs(model_patterns())

    @overload
    def __getitem__(self, index: int) -> tuple[re.Pattern[str], ModelDialect]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[re.Pattern[str], ModelDialect]]: ...
    def __getitem__(
        self, index: int | slice
    ) -> tuple[re.Pattern[str], ModelDialect] | Sequence[tuple[re.Pattern[str], ModelDialect]]:
        return self._pairs()[index]

    def __len__(self) -> int:
        return len(self._pairs())

    def __iter__(self) -> Iterator[tuple[re.Pattern[str], ModelDialect]]:
        return iter(self._pairs())


_Patterns = tuple[tuple[re.Pattern[str], str, ModelPattern], ...]
# The registry's last patterns and their results: rebuilt only when the registry changed.
_last: list[tuple[_Patterns, tuple[tuple[re.Pattern[str], ModelDialect], ...]]] = []


def _pairs(patterns: _Patterns) -> tuple[tuple[re.Pattern[str], ModelDialect], ...]:
    """The registry's patterns with their results."""
    if _last and _last[0][0] is patterns:
        return _last[0][1]
    found = tuple(
        (compiled, ModelDialect(name, p.reasoning, p.prefilled)) for compiled, name, p in patterns
    )
    _last[:] = [(patterns, found)]
    return found


MODEL_PATTERNS: Final[Sequence[tuple[re.Pattern[str], ModelDialect]]] = _ModelPatterns()
"""(pattern, result) pairs, tried in order on the lowercased last segment of a name: a
view of the registry's records (``ModelPattern``, by priority)."""


def dialect_for_model(model_name: str) -> ModelDialect | None:
    """The dialect and reasoning format of a served model, from its name.

    Args:
        model_name: the name the server knows the model by, in any case, with or
            without an organisation (``Qwen/Qwen3-8B``, ``qwen3:8b``,
            ``hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M``).

    Returns:
        What the first matching pattern of :data:`MODEL_PATTERNS` says, or None for a
        name of no known family (and for an empty name).

    Example:
        >>> dialect_for_model("NousResearch/Hermes-3-Llama-3.1-8B").dialect
        'hermes'
        >>> dialect_for_model("mistralai/Magistral-Small-2509").reasoning
        ('[THINK]', '[/THINK]')
    """
    if not isinstance(model_name, str):
        return None
    # The last path segment: "hf.co/unsloth/X-GGUF:Q4_K_M" -> "x-gguf:q4_k_m".
    name = model_name.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    if not name:
        return None
    for pattern, found in _pairs(model_patterns()):
        if pattern.search(name):
            return found
    return None


def model_name_of(model: object) -> str | None:
    """The served name of a chat model: its ``model`` attribute, when that is a string.

    ``OpenAIChatModel`` has one; so may any other model object.

    Example:
        >>> class Served:
        ...     model = "Qwen/Qwen3-8B"
        >>> model_name_of(Served()), model_name_of(object())
        ('Qwen/Qwen3-8B', None)
    """
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else None


def resolve_model_dialect(
    model_name: str | None, where: str, *, instead: str | None = None
) -> ModelDialect:
    """:func:`dialect_for_model` for ``"auto"``: a found, available dialect, or an error.

    Args:
        model_name: the model's name (None when the model has none).
        where: who asks, for the message (``"ReActAgent"``, ``"@llm_function"``...).
        instead: what the message says to pass instead (default: name the dialect,
            as a keyword argument).

    Raises:
        ConfigError: no name, a name of no known family, or a family whose dialect is
            not available in this version; the message says what to pass instead.
    """
    if instead is None:
        instead = "name the dialect instead (e.g. dialect='hermes'; see docs/dialects.md)"
    if model_name is None:
        raise ConfigError(
            f'{where}: dialect "auto" needs the model\'s name (a model with a string '
            f"'model' attribute, such as OpenAIChatModel); {instead}"
        )
    found = dialect_for_model(model_name)
    if found is None:
        raise ConfigError(
            f'{where}: dialect "auto" does not know the model {model_name!r}; {instead}'
        )
    if found.dialect not in dialect_names():
        raise ConfigError(
            f"{where}: dialect {found.dialect!r} for model {model_name!r} is not available "
            f"in this version; {instead}"
        )
    return found


def with_reasoning(config: ParserConfig, found: ModelDialect) -> ParserConfig:
    """``config`` reading the model's reasoning, unless its thinking tags were set.

    A dialect that registered its own reasoning format is read by it, the configuration
    left as it is.  The thinking tags count as set when they are not the defaults
    (:data:`~stream_parser.core.config.DEFAULT_THINKING_TAGS`) or the stream starts in
    thinking; then ``config`` is returned as it is, as it is when the model writes no
    reasoning in tags.

    Example:
        >>> found = dialect_for_model("Qwen/Qwen3-235B-A22B-Thinking-2507")
        >>> config = with_reasoning(ParserConfig(), found)
        >>> config.thinking_tags, config.start_in_thinking
        ((('<think>', '</think>'),), True)
        >>> config = with_reasoning(ParserConfig(), dialect_for_model("deepseek-r1:8b"))
        >>> config.start_in_thinking, config.start_from_template  # R1's template opens it
        (True, True)
        >>> config = with_reasoning(ParserConfig(), dialect_for_model("DeepSeek-V3.1"))
        >>> config.thinking_tags is None  # deepseek's own reasoning format reads it
        True
    """
    tags = config.thinking_tags
    user_set = (tags is not None and tags != DEFAULT_THINKING_TAGS) or (
        bool(config.start_in_thinking) and not config.start_from_template
    )
    if user_set:
        return config
    own = dialect_thinking((found.dialect,))
    if found.reasoning is None:
        if own is not None and (own.prefilled or own.bare_close):
            # This model writes no reasoning (Kimi-K2-Instruct): its replies start with
            # their answer, whatever the dialect's format would allow.
            return dataclasses.replace(config, start_in_thinking=False)
        return config
    if (
        own is not None
        and found.reasoning in own.tags
        and (not found.prefilled_reasoning or own.prefilled)
    ):
        # The dialect's registered reasoning format already reads this model (its tags,
        # a prefilled or bare closing tag): the configuration is left unset.
        return config
    return dataclasses.replace(
        config,
        thinking_tags=(found.reasoning,),
        thinking_start_tag=None,
        thinking_end_tag=None,
        start_in_thinking=found.prefilled_reasoning,
        # The template's doing, not the user's: reasoning that a server sends on its own
        # channel still makes the content the reply.
        start_from_template=found.prefilled_reasoning,
    )
