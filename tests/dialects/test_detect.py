"""dialect_for_model: the family table, name by name, and what "auto" does with it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import ConfigError, ParserConfig, dialect_for_model
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.detect import (
    MODEL_PATTERNS,
    model_name_of,
    resolve_model_dialect,
    with_reasoning,
)

THINK = ("<think>", "</think>")
K3_THINK = ("<|open|>think<|sep|>", "<|close|>think<|sep|>")

SEED_THINK = ("<seed:think>", "</seed:think>")

# name -> (dialect, reasoning, prefilled)
NAMES: dict[str, tuple[str, tuple[str, str] | None, bool]] = {
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": ("qwen3_coder", None, False),
    "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8": ("qwen3_coder", None, False),
    "qwen3-coder:30b": ("qwen3_coder", None, False),
    "hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M": ("qwen3_coder", None, False),
    # Qwen3.5 and later write Qwen3-Coder's XML form; their template opens reasoning.
    "Qwen/Qwen3.5-35B-A3B": ("qwen3_coder", THINK, True),
    "Qwen/Qwen3.5-397B-A17B": ("qwen3_coder", THINK, True),
    "qwen3.5:35b": ("qwen3_coder", THINK, True),
    "hf.co/unsloth/Qwen3.5-35B-A3B-GGUF:Q4_K_M": ("qwen3_coder", THINK, True),
    "Qwen/Qwen3.6-35B-A3B": ("qwen3_coder", THINK, True),
    "Qwen/Qwen3.8-32B": ("qwen3_coder", THINK, True),
    "Qwen/Qwen3-8B": ("hermes", THINK, False),
    "qwen3:8b": ("hermes", THINK, False),
    "QWEN3-32B-AWQ": ("hermes", THINK, False),
    "Qwen/Qwen3-30B-A3B-Thinking-2507": ("hermes", THINK, True),
    "Qwen/Qwen3-235B-A22B-Instruct-2507": ("hermes", None, False),
    "Qwen/QwQ-32B": ("hermes", THINK, True),
    "Qwen/Qwen2.5-7B-Instruct": ("hermes", None, False),
    "qwen2.5:7b": ("hermes", None, False),
    "Qwen/Qwen2.5-Coder-32B-Instruct": ("hermes", None, False),
    "NousResearch/Hermes-3-Llama-3.1-8B": ("hermes", None, False),
    "NousResearch/Hermes-2-Pro-Mistral-7B": ("hermes", None, False),
    "NousResearch/Hermes-4-14B": ("hermes", THINK, False),
    "deepseek-ai/DeepSeek-V3.1": ("deepseek", THINK, False),
    "deepseek-ai/DeepSeek-V3.2": ("deepseek", THINK, True),
    "deepseek-ai/DeepSeek-V3.2-Exp": ("deepseek", THINK, True),
    "deepseek-ai/DeepSeek-V4": ("deepseek", THINK, True),
    "deepseek-ai/DeepSeek-V3-0324": ("deepseek", THINK, False),
    "deepseek-ai/DeepSeek-R1": ("deepseek", THINK, True),
    "deepseek-r1:8b": ("deepseek", THINK, True),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": ("deepseek", THINK, True),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": ("deepseek", THINK, True),
    "LiquidAI/LFM2-1.2B-Tool": ("pythonic", THINK, False),
    "allenai/Olmo-3-7B-Instruct": ("pythonic", None, False),
    "allenai/Olmo-3-7B-Think": ("pythonic", THINK, True),
    "MiniMaxAI/MiniMax-M2": ("minimax_m2", THINK, True),
    "MiniMaxAI/MiniMax-M2.5": ("minimax_m2", THINK, True),
    "ByteDance-Seed/Seed-OSS-36B-Instruct": ("seed_oss", SEED_THINK, False),
    "meituan-longcat/LongCat-Flash-Chat": ("longcat", None, False),
    "baidu/ERNIE-4.5-21B-A3B-Thinking": ("ernie", THINK, True),
    "ernie-4.5-21b-a3b-thinking:q4_k_m": ("ernie", THINK, True),
    "LongCat-Flash-Chat-FP8": ("longcat", None, False),
    "hf.co/unsloth/Seed-OSS-36B-Instruct-GGUF:Q4_K_M": ("seed_oss", SEED_THINK, False),
    "tencent/Hunyuan-A13B-Instruct": ("hunyuan", THINK, False),
    "tencent/Hunyuan-A13B-Instruct-FP8": ("hunyuan", THINK, False),
    "hf.co/unsloth/Hunyuan-A13B-Instruct-GGUF:Q4_K_M": ("hunyuan", THINK, False),
    "Salesforce/Llama-xLAM-2-8b-fc-r": ("xlam", None, False),
    "Salesforce/Llama-xLAM-2-70b-fc-r": ("xlam", None, False),
    "Salesforce/xLAM-2-32b-fc-r": ("xlam", None, False),
    "Salesforce/xLAM-2-3b-fc-r-gguf": ("xlam", None, False),
    "ibm-granite/granite-3.3-8b-instruct": ("granite", THINK, False),
    "granite3.2:8b": ("granite", THINK, False),
    "ibm-granite/granite-4.0-h-small": ("granite", None, False),
    "microsoft/Phi-4-mini-instruct": ("phi4_mini", None, False),
    "phi4-mini:3.8b": ("phi4_mini", None, False),
    "internlm/internlm2_5-7b-chat": ("internlm", None, False),
    "internlm2:7b": ("internlm", None, False),
    "google/gemma-4-27b-it": ("gemma4", ("<|channel>thought", "<channel|>"), False),
    "gemma4:12b": ("gemma4", ("<|channel>thought", "<channel|>"), False),
    "mistralai/Mistral-Small-3.2-24B-Instruct-2506": ("mistral", None, False),
    "mistralai/Mistral-7B-Instruct-v0.3": ("mistral", None, False),
    "mistralai/Magistral-Small-2509": ("mistral", ("[THINK]", "[/THINK]"), False),
    "mistralai/Devstral-Small-2507": ("mistral", None, False),
    "devstral:24b": ("mistral", None, False),
    "mistralai/Ministral-8B-Instruct-2410": ("mistral", None, False),
    "openai/gpt-oss-20b": ("gpt_oss", None, False),
    "gpt-oss:20b": ("gpt_oss", None, False),
    "GPT_OSS_120B": ("gpt_oss", None, False),
    "moonshotai/Kimi-K2-Instruct": ("kimi", None, False),
    "moonshotai/Kimi-K2-Thinking": ("kimi", THINK, True),
    "moonshotai/Kimi-K3": ("kimi", K3_THINK, True),
    "kimi-k3:latest": ("kimi", K3_THINK, True),
    "zai-org/GLM-4.6": ("glm", THINK, False),
    "zai-org/GLM-4.5-Air": ("glm", THINK, False),
    "glm4.5": ("glm", THINK, False),
    "THUDM/GLM-Z1-9B-0414": ("glm", THINK, False),
    # GLM-4.7 and 5 (and DeepSeek-V3.2, V4, Kimi-K3): the template opens reasoning.
    "zai-org/GLM-4.7": ("glm", THINK, True),
    "zai-org/GLM-4.7-Flash": ("glm", THINK, True),
    "zai-org/GLM-5.3": ("glm", THINK, True),
    "zai-org/GLM-5": ("glm", THINK, True),
    "glm-5.1:latest": ("glm", THINK, True),
    "THUDM/glm-4-9b-chat": ("glm", None, False),
    "THUDM/GLM-4-32B-0414": ("glm", None, False),
    "meta-llama/Llama-3.1-8B-Instruct": ("llama", None, False),
    "meta-llama/Llama-3.3-70B-Instruct": ("llama", None, False),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": ("llama", None, False),
    "llama3.1:8b": ("llama", None, False),
    "llama3.2": ("llama", None, False),
    "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF": ("llama", None, False),
}


@pytest.mark.parametrize("name", list(NAMES))
def test_known_names(name: str) -> None:
    dialect, reasoning, prefilled = NAMES[name]
    assert dialect_for_model(name) == ModelDialect(dialect, reasoning, prefilled)


@pytest.mark.parametrize("name", list(NAMES))
def test_case_and_org_prefix_do_not_matter(name: str) -> None:
    bare = name.rsplit("/", 1)[-1]
    expected = dialect_for_model(name)
    assert dialect_for_model(bare.upper()) == expected
    assert dialect_for_model(f"some-org/{bare.lower()}") == expected
    assert dialect_for_model(f"  {name}  ") == expected


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "my-finetune",
        "gpt-4o",
        "codellama:7b",
        "meta-llama/Llama-2-7b-chat-hf",
        "google/gemma-3-27b-it",
        "Qwen/Qwen1.5-7B-Chat",
        "tencent/Hunyuan-7B-Instruct",
        "Salesforce/xLAM-7b-fc-r",  # xLAM v1 writes {"tool_calls": [...]}
    ],
)
def test_unknown_names(name: str) -> None:
    assert dialect_for_model(name) is None


def test_a_trailing_slash_is_ignored() -> None:
    assert dialect_for_model("qwen3-coder/") == dialect_for_model("qwen3-coder")


def test_not_a_string_is_unknown() -> None:
    assert dialect_for_model(None) is None  # type: ignore[arg-type]


def test_the_org_alone_says_nothing() -> None:
    """The family is read from the last segment: an org named like a family is not it."""
    assert dialect_for_model("deepseek-ai/my-model") is None
    assert dialect_for_model("Qwen/Qwen3-Coder-30B").dialect == "qwen3_coder"  # type: ignore[union-attr]


def test_every_row_of_the_table_is_reached() -> None:
    """Most specific first: no pattern is shadowed by one before it for its own names."""
    reached = {
        next(
            i
            for i, (pattern, _) in enumerate(MODEL_PATTERNS)
            if pattern.search(name.strip().rsplit("/", 1)[-1].lower())
        )
        for name in NAMES
    }
    assert reached == set(range(len(MODEL_PATTERNS)))


def test_the_result_is_frozen() -> None:
    found = dialect_for_model("Qwen/Qwen3-8B")
    assert found is not None
    with pytest.raises(AttributeError):
        found.dialect = "xml"  # type: ignore[misc]


# --- resolve_model_dialect / model_name_of / with_reasoning ---------------------------------


def test_resolve_gives_an_available_dialect() -> None:
    assert resolve_model_dialect("Qwen/Qwen3-8B", "here").dialect == "hermes"


def test_resolve_without_a_name() -> None:
    with pytest.raises(ConfigError, match=r"needs the model's name.*dialect='hermes'"):
        resolve_model_dialect(None, "ReActAgent")


def test_resolve_an_unknown_name() -> None:
    with pytest.raises(ConfigError, match=r"ReActAgent: .*does not know the model 'my-model'"):
        resolve_model_dialect("my-model", "ReActAgent")


def test_resolve_a_dialect_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    import stream_parser.dialects.detect as detect

    monkeypatch.setattr(detect, "dialect_names", lambda: ("xml", "hermes"))
    with pytest.raises(
        ConfigError,
        match="dialect 'mistral' for model 'mistralai/Devstral-Small-2507' is not available "
        "in this version",
    ):
        resolve_model_dialect("mistralai/Devstral-Small-2507", "x")


def test_model_name_of() -> None:
    class Named:
        def __init__(self, model: object) -> None:
            self.model = model

    assert model_name_of(Named("Qwen/Qwen3-8B")) == "Qwen/Qwen3-8B"
    assert model_name_of(Named("")) is None
    assert model_name_of(Named(3)) is None
    assert model_name_of(object()) is None


def test_with_reasoning_takes_the_model_s_tags() -> None:
    # hermes registers no reasoning format of its own: the model's tags are set.
    found = ModelDialect("hermes", ("[THINK]", "[/THINK]"))
    config = with_reasoning(ParserConfig(report_unknown_tools=True), found)
    assert config.thinking_tags == (("[THINK]", "[/THINK]"),)
    assert config.start_in_thinking is False
    assert config.report_unknown_tools is True


def test_a_dialect_s_own_reasoning_format_is_left_to_read_it() -> None:
    found = ModelDialect("mistral", ("[THINK]", "[/THINK]"))
    config = with_reasoning(ParserConfig(dialect="mistral"), found)
    assert config.thinking_tags is None
    assert config.thinking_pairs == (("[THINK]", "[/THINK]"), ("<think>", "</think>"))


def test_with_reasoning_keeps_tags_the_user_set() -> None:
    found = ModelDialect("deepseek", THINK, prefilled_reasoning=True)
    own = ParserConfig(thinking_tags=(("<reason>", "</reason>"),))
    assert with_reasoning(own, found) is own
    prefilled = ParserConfig(start_in_thinking=True)
    assert with_reasoning(prefilled, found) is prefilled


def test_with_reasoning_without_reasoning_keeps_the_config() -> None:
    config = ParserConfig()
    assert with_reasoning(config, ModelDialect("llama")) is config


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_name_gives_a_known_dialect_or_none(name: str) -> None:
    """A name is data: any string gives a result of the table, or None, never an error."""
    found = dialect_for_model(name)
    assert found is None or found in {result for _, result in MODEL_PATTERNS}


@pytest.mark.parametrize("name", ["deepseek", "gemma4", "gpt_oss", "kimi", "llama", "mistral"])
def test_families_written_in_special_tokens_ask_for_raw_output(name: str) -> None:
    from stream_parser.dialects import get_dialect

    assert get_dialect(name).special_tokens


def test_a_model_without_reasoning_does_not_start_inside_it() -> None:
    # The kimi dialect reads replies as starting inside reasoning (K2-Thinking's
    # template opens it); K2-Instruct writes none, so its calls must not be swallowed.
    found = dialect_for_model("moonshotai/Kimi-K2-Instruct")
    assert found is not None and found.reasoning is None
    config = with_reasoning(ParserConfig(dialect="kimi"), found)
    assert config.starts_in_thinking is False
    thinking = with_reasoning(
        ParserConfig(dialect="kimi"), dialect_for_model("moonshotai/Kimi-K2-Thinking")
    )
    assert thinking.starts_in_thinking is True
