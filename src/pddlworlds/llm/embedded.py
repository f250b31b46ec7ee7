"""The embedded backend: a GGUF model run in-process by llama.cpp (default: Gemma 3 270M, shipped as a package)."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..files import file_sha256
from ..host import default_threads
from .adapter_check import check_adapter
from .base import EMPTY_COMPLETION, Choice, ChoiceRank, Completion, Message
from .cancelling import abortable
from .kv_cache import DEFAULT_CACHE_BYTES, PromptStates, common_prefix
from .model_files import (
    CHOICE_VOCAB,
    DEFAULT_MODEL_ID,
    FULL_VOCAB,
    INSTALL_HINT,
    SHIPPED_ADAPTER,
    default_model_path,
    resolve_adapter,
)
from .prompt_formats import gemma_chat_pieces, plain_pieces
from .tokenising import tokenize_pieces
from .vocab_trim import CheckedVocabulary, choice_vocab_keep, choice_vocab_model_path

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "PROMPT_CACHE_ENV",
    "EmbeddedLLM",
    "from_spec",
    "label",
    "prompt_cache_budget",
    "quiet_native_stderr",
]

#: Environment variable that sets the saved-prompt-state budget of `--llm embedded`, in MiB (0: none).
PROMPT_CACHE_ENV = "PDDLWORLDS_PROMPT_CACHE_MB"


class _LoadedModels:
    """Process-wide cache of loaded llama.cpp models: loading costs seconds and ~400 MB each.

    Each model comes with a lock, because a ``Llama`` object (and its KV cache) is not thread-safe, and
    with the saved prompt states of its context, kept apart per cache owner (`with_cache_owner`) and keyed
    by tokens within an owner.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _models: ClassVar[dict[tuple[Any, ...], tuple[Any, threading.Lock, PromptStates]]] = {}

    @classmethod
    def get(cls, key: tuple[Any, ...], load: Callable[[], Any]) -> tuple[Any, threading.Lock, PromptStates]:
        with cls._lock:
            if key not in cls._models:
                cls._models[key] = (load(), threading.Lock(), PromptStates(0))
            return cls._models[key]

    @classmethod
    def clear(cls) -> None:
        """Forget all loaded models (they are freed once no EmbeddedLLM refers to them)."""
        with cls._lock:
            cls._models.clear()


class EmbeddedLLM:
    """Gemma 3 270M (or any chat GGUF using Gemma's template) run in-process by llama.cpp.

    Successive calls whose prompts share a token prefix reuse the KV cache, so an agent
    episode whose chat grows turn by turn only pays for the new tokens. That needs
    ``swa_full=True``: Gemma 3 uses sliding-window attention and llama.cpp otherwise keeps
    only a window-sized cache that cannot be truncated once the prompt outgrows it.
    Greedy decoding at temperature 0; the sampler seed matters only above 0.

    A call that would throw away much of the KV cache (another system prompt, another agent's prompt)
    first saves it, and a call finds the saved state sharing the longest prefix with its prompt
    (`kv_cache.PromptStates`, at most ``prompt_cache_bytes`` per loaded model; 0 keeps none). A view made
    by `with_cache_owner` reuses only what calls of its owner evaluated.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 16384,
        n_threads: int | None = None,
        seed: int = 0,
        verbose: bool = False,
        swa_full: bool = True,
        prompt_format: str = "auto",
        lora_path: str | os.PathLike[str] | None = SHIPPED_ADAPTER,
        prompt_cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ImportError(f"EmbeddedLLM needs llama-cpp-python: {INSTALL_HINT}") from exc
        if prompt_cache_bytes < 0:
            raise ValueError(f"prompt_cache_bytes must be >= 0, not {prompt_cache_bytes}")
        cut = model_path is not None and str(model_path) == CHOICE_VOCAB
        if model_path is not None and str(model_path) == FULL_VOCAB:  # the default model, every token named
            model_path = None
        path = choice_vocab_model_path() if cut else Path(model_path) if model_path is not None else default_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"model file not found: {path}")
        self.model_path = path.resolve()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self._model_id = (DEFAULT_MODEL_ID if model_path is None else f"{DEFAULT_MODEL_ID}-{CHOICE_VOCAB}" if cut
                          else _model_id_from_path(self.model_path))
        self._sha256: str | None = None
        # A LoRA adapter (llama.cpp GGUF, see pddlworlds.training) changes the model: its name and digest
        # join the model's id, so runs with and without it are never confused.
        self.lora_path = resolve_adapter(lora_path, model_path)
        if self.lora_path is not None:
            check_adapter(self.lora_path, self.model_path)  # llama.cpp crashes on a bad file: refuse it here
            self._model_id += f"+{_model_id_from_path(self.lora_path)}-{file_sha256(self.lora_path)[:12]}"
        if prompt_format not in ("auto", "chat", "plain"):
            raise ValueError(f"prompt_format must be 'auto', 'chat' or 'plain', not {prompt_format!r}")
        if prompt_format == "auto":  # instruction-tuned GGUFs are named "-it"; the default one is not
            prompt_format = "chat" if "-it" in self.model_path.name.lower() else "plain"
        self.prompt_format = prompt_format

        def load() -> Any:
            with quiet_native_stderr(enabled=not verbose):
                return llama_cpp.Llama(
                    str(self.model_path),
                    n_ctx=n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    seed=seed,
                    swa_full=swa_full,
                    verbose=verbose,
                    lora_path=str(self.lora_path) if self.lora_path is not None else None,
                )

        key = (str(self.model_path), n_ctx, self.n_threads, swa_full, str(self.lora_path))
        self._llama, self._lock, self._states = _LoadedModels.get(key, load)
        #: What tokenises prompts: the model itself, or for the cut vocabulary the model checked on every text
        #: against the full model's tokeniser (`vocab_trim.CheckedVocabulary`).
        self._vocab: Any = self._llama
        if cut:
            if prompt_format != "plain":
                raise ValueError(f"{CHOICE_VOCAB}: the cut vocabulary is the default model's, which takes the "
                                 f"plain prompt format, not {prompt_format!r}")
            with quiet_native_stderr(enabled=not verbose):
                full = llama_cpp.Llama(str(default_model_path()), n_ctx=64, vocab_only=True, verbose=verbose)
            self._vocab = CheckedVocabulary(self._llama, full, choice_vocab_keep())
        #: Whose calls these are: a call reuses only prompt tokens evaluated by calls of the same owner
        #: (`with_cache_owner`; None, the default, is one owner like any other).
        self.cache_owner: str | None = None
        with self._lock:  # the budget is the model's: the last EmbeddedLLM built on it sets it
            self._states.max_bytes = int(prompt_cache_bytes)

    @property
    def model_id(self) -> str:
        return self._model_id

    def with_cache_owner(self, owner: str) -> EmbeddedLLM:
        """This model (the same loaded weights, context and saved states) for calls of `owner` only: they
        reuse only prompt tokens that `owner`'s calls evaluated, so one agent's time never includes or
        skips work done for another (the evaluation gives each agent its own)."""
        view = copy.copy(self)
        view.cache_owner = owner
        return view

    @property
    def llama(self) -> Any:
        """The loaded `llama_cpp.Llama`, shared by every EmbeddedLLM of the same settings in this process."""
        return self._llama

    @contextlib.contextmanager
    def locked(self) -> Iterator[Any]:
        """The loaded model with its lock held, for callers that run llama.cpp themselves (`pddlworlds
        serve`'s text completions); they call `prompt_states.prepare` before evaluating, as `chat` does."""
        with self._lock:
            yield self._llama

    @property
    def prompt_states(self) -> PromptStates:
        """The saved prompt states of this model's context (shared by every EmbeddedLLM on the same model)."""
        return self._states

    @property
    def in_context_example(self) -> bool:
        """Whether the agents should show this model their in-context example: not with an adapter, since
        `pddlworlds train` trains on the prompts without it (the agents record which profile ran)."""
        return self.lora_path is None

    @property
    def model_sha256(self) -> str:
        """sha256 of the GGUF file (with an adapter: of both digests), computed on first use (evaluation
        records it)."""
        if self._sha256 is None:
            self._sha256 = file_sha256(self.model_path)
            if self.lora_path is not None:  # the model run is base + adapter
                both = f"{self._sha256}+{file_sha256(self.lora_path)}"
                self._sha256 = hashlib.sha256(both.encode()).hexdigest()
        return self._sha256

    def describe(self) -> dict[str, str]:
        """What identifies this model in a run's configuration: its name, the GGUF's digest, and how
        tokens are counted."""
        return {
            "model_id": self.model_id,
            "model_sha256": self.model_sha256,
            "token_counting": self.token_counting,
        }

    @property
    def token_counting(self) -> str:
        """How `count_tokens` counts, in words (the run configuration and report header record it)."""
        return f"llama.cpp's tokenizer of {self.model_id} (the model's own vocabulary)"

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's vocabulary (no BOS), as text: the agents count messages and
        memory, which the model is fed without special-token parsing (`tokenising`), so `<eos>` written
        in them counts as the tokens of its letters."""
        with self._lock:
            return len(tokenize_pieces(self._vocab, [(text, False)], add_bos=False))

    def reset(self) -> None:
        """Drop the KV cache and the saved prompt states, so the next call evaluates its whole prompt
        (for benchmarks and the cache's own tests)."""
        with self._lock:
            self._llama.reset()
            self._states.clear()

    def _pieces(self, messages: Sequence[Message]) -> list[tuple[str, bool]]:
        """The prompt in this model's format, as (text, is a marker) pieces (`tokenising`)."""
        return gemma_chat_pieces(messages) if self.prompt_format == "chat" else plain_pieces(messages)

    @staticmethod
    def _first_token_probe(callback: Callable[..., bool]) -> Any:
        import llama_cpp

        return llama_cpp.StoppingCriteriaList([callback])

    def next_token_logits(
        self, messages: Sequence[Message], reply: str = "", k: int = 5
    ) -> list[tuple[str, float]]:
        """The `k` likeliest tokens to follow the prompt and the start of a reply, with their logits,
        evaluated from an empty cache in one pass (to report how near a tie between two replies was)."""
        import llama_cpp
        import numpy as np

        pieces = self._pieces(messages)
        if reply:  # the reply's start is text, tokenised with the text it follows, as one string would be
            pieces = [*pieces[:-1], (pieces[-1][0] + reply, False)] if pieces and not pieces[-1][1] else [
                *pieces, (reply, False)]
        with self._lock:
            tokens = tokenize_pieces(self._vocab, pieces)
            self._llama.reset()
            self._llama.eval(tokens)
            self._states.live_owner = self.cache_owner  # the context now holds this caller's tokens
            n_vocab = self._llama.n_vocab()
            last = llama_cpp.llama_get_logits_ith(self._llama.ctx, -1)
            logits = np.ctypeslib.as_array(last, shape=(n_vocab,))
            best = np.argsort(logits)[::-1][:k]
            words = [self._llama.detokenize([int(t)]).decode("utf-8", "replace") for t in best]
            return [(word, float(logits[t])) for word, t in zip(words, best, strict=True)]

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
        cancel: threading.Event | None = None,
        cache_prompt: bool = True,
    ) -> Completion:
        """The model's reply. Setting `cancel` (from another thread) ends the call soon, during prompt
        evaluation or generation, with the error "cancelled" (`pddlworlds serve`: a client gone, a stop).
        `cache_prompt=False` evaluates the whole prompt afresh: the greedy reply is then the same whatever
        earlier calls left in the cache (a reused prefix was evaluated in other batches, whose sums differ in
        the last bits and can flip a near-tie)."""
        # The format's markers are control tokens; the messages' text never is (`tokenising`).
        pieces = self._pieces(messages)
        start = time.perf_counter()
        first_token: list[float] = []

        with self._lock, abortable(self._llama, cancel) as abort:
            def note_first_token(*_: Any) -> bool:  # llama.cpp calls it after each sampled token
                if not first_token:
                    first_token.append(time.perf_counter())
                    abort.prompt_done()
                return abort.requested

            tokens = tokenize_pieces(self._vocab, pieces)
            if len(tokens) + 1 > self.n_ctx:
                return Completion(
                    "",
                    len(tokens),
                    0,
                    time.perf_counter() - start,
                    error=f"prompt of {len(tokens)} tokens does not fit n_ctx={self.n_ctx}",
                )
            if abort.requested:
                return Completion("", len(tokens), 0, time.perf_counter() - start, error="cancelled")
            cached = self._states.prepare(self._llama, tokens, self.cache_owner, reuse=cache_prompt).cached_tokens
            try:
                result = self._llama.create_completion(
                    tokens,
                    max_tokens=max(1, min(max_tokens, self.n_ctx - len(tokens))),
                    temperature=temperature,
                    top_p=1.0,
                    top_k=0,
                    min_p=0.0,
                    typical_p=1.0,
                    repeat_penalty=1.0,
                    stop=list(stop),
                    seed=self.seed,
                    stopping_criteria=self._first_token_probe(note_first_token),
                )
            except (RuntimeError, ValueError) as exc:  # llama_decode failure or abort, context overflow
                self._llama.reset()  # the KV cache may be half-written
                error = "cancelled" if abort.requested else f"llama.cpp: {exc}"
                return Completion("", len(tokens), 0, time.perf_counter() - start, error=error)
        end = time.perf_counter()
        completion_tokens = int(result["usage"]["completion_tokens"])
        if abort.requested:
            return Completion("", len(tokens), completion_tokens, end - start, error="cancelled")
        # Prompt evaluation ends when the first token is sampled (restoring a saved state counts in it).
        timing = {"cached_tokens": cached, "prompt_eval_s": (first_token or [end])[0] - start}
        timing["generation_s"] = end - start - timing["prompt_eval_s"]
        text = str(result["choices"][0]["text"])
        ended = {"finish_reason": result["choices"][0].get("finish_reason")}
        if not text.strip():
            return Completion(
                "", len(tokens), completion_tokens, end - start, error=EMPTY_COMPLETION, raw=text, **timing, **ended
            )
        return Completion(text, len(tokens), completion_tokens, end - start, **timing, **ended)

    def replay(self, messages: Sequence[Message], reply: str) -> Completion:
        """What it costs this model to answer `messages` with `reply`, a reply given rather than sampled:
        the prompt is evaluated as `chat` evaluates it (cache, saved states, owner), then the reply's tokens
        one decode each, as sampled tokens are, and an end-of-text token closes it. Returns `reply` with the
        timing `chat` would record. For measuring a given trajectory's cost (a capable model's replies,
        `testing.scenarios`) on this backend; nothing is sampled."""
        pieces = self._pieces(messages)
        start = time.perf_counter()
        with self._lock:
            tokens = tokenize_pieces(self._vocab, pieces)
            written = tokenize_pieces(self._vocab, [(reply, False)], add_bos=False)
            if len(tokens) + len(written) + 1 > self.n_ctx:
                too_long = f"prompt and reply of {len(tokens) + len(written)} tokens do not fit n_ctx={self.n_ctx}"
                return Completion("", len(tokens), 0, time.perf_counter() - start, error=too_long)
            cached = self._states.prepare(self._llama, tokens, self.cache_owner).cached_tokens
            live = np.asarray(self._llama.input_ids[: self._llama.n_tokens], dtype=np.intc)
            # as llama-cpp-python's generate does: keep the shared prefix, evaluate at least the last token
            self._llama.n_tokens = min(common_prefix(live, np.asarray(tokens, dtype=np.intc)), len(tokens) - 1)
            self._llama.eval(tokens[self._llama.n_tokens :])
            evaluated = time.perf_counter()
            for token in written:  # the last reply token's logits would give the end-of-text token
                self._llama.eval([token])
        end = time.perf_counter()
        return Completion(reply, len(tokens), len(written) + 1, end - start, cached_tokens=cached,
                          prompt_eval_s=evaluated - start, generation_s=end - evaluated)

    def choose(
        self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "", rank: ChoiceRank | None = None
    ) -> Choice:
        """The most probable of `continuations` as the reply to `messages` after the reply's start `prefix`
        (the settings that choose): each one's summed token log-probability and its tokens, scored by
        `scoring.score_continuations`; with `rank`, the one it puts first, scoring only what decides it."""
        from .scoring import score_continuations

        pieces = self._pieces(messages) + ([(prefix, False)] if prefix else [])
        start = time.perf_counter()
        with self._lock:
            tokens = tokenize_pieces(self._vocab, pieces)
            candidates = [tokenize_pieces(self._vocab, [(c, False)], add_bos=False) for c in continuations]
            lengths = tuple(len(c) for c in candidates)
            ranked = None if rank is None else (lambda i, lp: rank(lp, lengths[i], continuations[i]))
            self._states.prepare(self._llama, tokens, self.cache_owner)  # a saved state may hold more of it
            try:
                scores = score_continuations(self._llama, tokens, candidates, ranked)
            except RuntimeError:  # llama_decode failure: the KV cache may be half-written
                self._llama.reset()
                raise
        best = scores.best if scores.best is not None else max(range(len(continuations)), key=lambda i: scores.logprobs[i])
        return Choice(best, scores.logprobs, len(tokens), scores.evaluated_tokens, time.perf_counter() - start, lengths,
                      cached_tokens=scores.cached_tokens, exact=scores.exact)


@contextlib.contextmanager
def quiet_native_stderr(enabled: bool) -> Iterator[None]:
    """Hold back what llama.cpp's C code writes to stderr while a model loads (llama-cpp-python quiets the
    model load but not the adapter's, which logs a line per tensor); replay it if the load fails."""
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            held.seek(0)
            sys.stderr.write(held.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _model_id_from_path(path: Path) -> str:
    return path.name.removesuffix(".gguf")


def from_spec(spec: Any) -> EmbeddedLLM:
    """The registry's factory: `--llm embedded[:choice-vocab|:full|:PATH.gguf]` with the spec's adapter file (None: none; the
    CLI resolves `--lora` into it), the run's thread count and the saved-prompt-state budget."""
    budget = prompt_cache_budget()
    return EmbeddedLLM(spec.model, n_threads=spec.n_threads, lora_path=spec.lora, prompt_cache_bytes=budget)


def prompt_cache_budget() -> int:
    """The saved-prompt-state budget in bytes: `PROMPT_CACHE_ENV` (MiB) if set, else `DEFAULT_CACHE_BYTES`."""
    value = os.environ.get(PROMPT_CACHE_ENV, "").strip()
    if not value:
        return DEFAULT_CACHE_BYTES
    try:
        mib = float(value)
    except ValueError:
        raise ValueError(f"{PROMPT_CACHE_ENV}={value!r}: expected a number of MiB (0: none)") from None
    if mib < 0:
        raise ValueError(f"{PROMPT_CACHE_ENV}={value!r}: expected a number of MiB >= 0")
    return int(mib * 1024 * 1024)


def label(entry: dict[str, Any]) -> str:
    """A stored configuration entry in words (for reports)."""
    sha = str(entry.get("model_sha256") or "")
    return f"embedded {entry.get('model_id')} (sha256 {sha[:16]}…)"
