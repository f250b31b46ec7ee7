"""Language models behind one small protocol (`base.LLM`), one module per backend, and the `BACKENDS` table.

    from pddlworlds.llm import BACKENDS, parse_llm
    llm = parse_llm("openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1").build()
    llm.chat([Message("user", "Hello")]).text

Backend modules import their libraries (llama.cpp, openai) only when a model is built.
"""

from __future__ import annotations

from .base import (
    DECODINGS,
    EMPTY_COMPLETION,
    LLM,
    SERVICE_ERROR_KINDS,
    CandidateScorer,
    Choice,
    ChoiceRank,
    Completion,
    LLMServiceError,
    LLMUnavailableError,
    Message,
    candidate_scorer,
    for_cache_owner,
)
from .embedded import EmbeddedLLM
from .model_files import (
    CHOICE_VOCAB,
    DEFAULT_ADAPTER,
    DEFAULT_MODEL_ID,
    FULL_VOCAB,
    NO_ADAPTER,
    SHIPPED_ADAPTER,
    SHIPPED_ADAPTERS,
    default_model_path,
    names_default_model,
    resolve_adapter,
    shipped_adapter_path,
)
from .openai_compatible import OpenAICompatibleLLM
from .prompt_formats import format_gemma_chat, format_plain
from .registry import (
    BACKENDS,
    NO_MODEL,
    Backend,
    BackendSpec,
    get_backend,
    llm_usage,
    parse_llm,
    register_backend,
)

__all__ = [
    "BACKENDS",
    "CHOICE_VOCAB",
    "DECODINGS",
    "DEFAULT_ADAPTER",
    "DEFAULT_MODEL_ID",
    "EMPTY_COMPLETION",
    "FULL_VOCAB",
    "LLM",
    "NO_ADAPTER",
    "NO_MODEL",
    "SERVICE_ERROR_KINDS",
    "SHIPPED_ADAPTER",
    "SHIPPED_ADAPTERS",
    "Backend",
    "BackendSpec",
    "CandidateScorer",
    "Choice",
    "ChoiceRank",
    "Completion",
    "EmbeddedLLM",
    "LLMServiceError",
    "LLMUnavailableError",
    "Message",
    "OpenAICompatibleLLM",
    "candidate_scorer",
    "default_model_path",
    "for_cache_owner",
    "format_gemma_chat",
    "format_plain",
    "get_backend",
    "llm_usage",
    "names_default_model",
    "parse_llm",
    "register_backend",
    "resolve_adapter",
    "shipped_adapter_path",
]
