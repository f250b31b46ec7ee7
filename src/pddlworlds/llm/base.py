"""What agents see of a language model: the `LLM` protocol and the records it trades in.

Agents only call ``chat(messages) -> Completion`` and ``count_tokens(text)``; in the admissible-action
setting (`DECODINGS`) they call ``choose(messages, continuations) -> Choice`` instead of ``chat`` for their
action, which only backends that can score a given text (`CandidateScorer`) offer. A reply the model gave but
that is unusable comes back as a `Completion` with ``error`` set (``text`` ""), so an agent can record an
invalid step and go on. Benchmark defaults: temperature 0, top_p 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..printable import printable, valid_text

__all__ = [
    "DECODINGS",
    "EMPTY_COMPLETION",
    "LLM",
    "SERVICE_ERROR_KINDS",
    "CandidateScorer",
    "Choice",
    "ChoiceRank",
    "Completion",
    "LLMServiceError",
    "LLMUnavailableError",
    "Message",
    "candidate_scorer",
    "for_cache_owner",
]

#: How an agent turns the model into an action. "free": the model writes its reply (the setting of every
#: comparison with published numbers). "admissible": the model's own log-probability of each currently
#: valid action (and each meta-action the prompt offers) picks one; a declared setting of its own, never
#: comparable with published numbers.
DECODINGS = ("free", "admissible")

#: `Completion.error` of a reply with nothing but white space in it (a stop sequence written first
#: included: `finish_reason` then says "stop").
EMPTY_COMPLETION = "empty completion"


@dataclass(frozen=True)
class Message:
    """One chat turn; ``role`` is "system", "user" or "assistant"."""

    role: str
    content: str


@dataclass(frozen=True)
class Completion:
    """A backend's answer. ``error`` is set (and ``text`` is "") for failed or unusable replies.

    ``raw`` keeps the unparsed reply when it was unusable, for debugging records. Both are valid text (a
    lone surrogate a server sent becomes U+FFFD here, whatever the backend), so the reply can be stored and
    sent back in the next request. Backends that know it say how many prompt tokens came from their cache
    and split the latency into prompt evaluation (up to the first token) and generation, and why the reply
    ended (``finish_reason``: "stop" at the end of text or a stop sequence, "length" at ``max_tokens`` or
    the context's end); None where they do not.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    error: str | None = None
    raw: str | None = None
    cached_tokens: int | None = None
    prompt_eval_s: float | None = None
    generation_s: float | None = None
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", valid_text(self.text))
        if self.raw is not None:
            object.__setattr__(self, "raw", valid_text(self.raw))


@runtime_checkable
class LLM(Protocol):
    """What agents need from a language model."""

    @property
    def model_id(self) -> str: ...

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...


#: How a caller ranks candidates: (summed log-probability, tokens, text) -> score, never falling as the sum
#: rises (`agents.admissible.CHOICE_SCORES`). Given to `CandidateScorer.choose`, it lets the backend stop
#: scoring once the pick is decided.
ChoiceRank = Callable[[float, int, str], float]


@dataclass(frozen=True)
class Choice:
    """A backend's pick among given continuations of the prompt: `index` of the most probable one (under
    the `rank` it was given; else the largest sum), and `logprobs`, each continuation's summed token
    log-probability (in the order given); where `exact` says False, an upper bound of it (the backend
    stopped once the pick was decided).

    `prompt_tokens` is the prompt's length, `scored_tokens` how many candidate tokens the model evaluated
    (shared prefixes are evaluated once), `latency_s` the whole call, `lengths` each continuation's tokens
    (so a caller can rank by another rule than the sum, e.g. per token), `cached_tokens` how many of the
    prompt's tokens came from the backend's cache (None: it does not say).
    """

    index: int
    logprobs: tuple[float, ...]
    prompt_tokens: int
    scored_tokens: int
    latency_s: float
    lengths: tuple[int, ...] = ()
    cached_tokens: int | None = None
    exact: tuple[bool, ...] = ()  # which logprobs are whole sums (the others: bounds); () when all are


@runtime_checkable
class CandidateScorer(Protocol):
    """A model that can say how probable a given continuation of a prompt is (the admissible setting)."""

    def choose(
        self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "", rank: ChoiceRank | None = None
    ) -> Choice: ...


def candidate_scorer(llm: object) -> CandidateScorer:
    """`llm` as a `CandidateScorer`, or a ValueError saying that this backend cannot score candidates."""
    if isinstance(llm, CandidateScorer):
        return llm
    name = getattr(llm, "model_id", type(llm).__name__)
    raise ValueError(
        f"a setting that chooses among candidates (admissible, state-choice) needs a model that scores given "
        f"texts by log-probability (the embedded backend); {name} ({type(llm).__name__}) does not: use --setting free"
    )


def for_cache_owner(llm: Any, owner: str) -> Any:
    """`llm` for the calls of `owner` alone, where the backend keeps a prompt cache that several callers
    share in this process (the embedded model: `with_cache_owner`), else `llm` itself. An evaluation gives
    each agent its own, so what one agent evaluated never shortens another's calls."""
    own = getattr(llm, "with_cache_owner", None)
    return own(owner) if callable(own) else llm


class LLMUnavailableError(RuntimeError):
    """The backend cannot be used at all (endpoint down, bad credentials): stop the evaluation.

    The message often quotes the server; it is kept printable (`printable`), as it goes to the terminal."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


class LLMServiceError(RuntimeError):
    """A call failed for a reason outside the agent's control, after the backend's retries: the endpoint
    answered 429 or 5xx to the end, rejected the request (4xx; a prompt over its context among them), sent
    no usable reply (invalid JSON, no choices), did not answer in time, or the call was cancelled. The evaluation records the episode as a
    fault (left out of the scores, re-run on resume), never as an invalid agent action.

    `kind` is one of `SERVICE_ERROR_KINDS`; `attempts` the HTTP attempts the call made. The message quotes
    the server; it is made printable (control characters escaped) here, before it is stored or shown.
    """

    def __init__(self, kind: str, message: str, attempts: int = 1) -> None:
        message = printable(message)
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts

    def as_record(self) -> dict[str, object]:
        """The stored form (`EpisodeRecord.error`)."""
        return {"kind": self.kind, "message": self.message, "count": self.attempts}


#: What `LLMServiceError.kind` can be.
SERVICE_ERROR_KINDS = (
    "rate_limited",  # HTTP 429 through every retry
    "server_error",  # HTTP 5xx through every retry
    "rejected",  # another HTTP 4xx (bad request, bad key, unknown model): not retried
    "context_length",  # HTTP 400: the prompt does not fit the server's context (not retried)
    "invalid_reply",  # a 200 whose body is not a chat completion (not JSON, an error object)
    "no_choices",  # a 200 with an empty `choices` list
    "timeout",  # no answer within --request-timeout, through every retry
    "deadline",  # the call's total deadline (--call-deadline) passed
    "connection",  # the server could not be reached
    "cancelled",  # the run was interrupted (Ctrl-C) while the call was in flight
)
