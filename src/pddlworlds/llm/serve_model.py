"""The model's work behind `pddlworlds serve`'s text routes: `/v1/completions` (a prompt completed as plain
text, with token log-probabilities and `echo`) and `/v1/embeddings`.

A completion runs on the served `EmbeddedLLM`'s own context, under its lock and through its saved prompt
states, as its chat calls do: the prompt is the text as given, BOS first, tokenised as text (a prompt that
quotes `<eos>` gets the tokens of those letters, as everywhere else), and sampled with the chat path's
sampler (greedy at temperature 0). Tokens are generated one by one here (llama-cpp-python's
`create_completion` does not tell which tokens it sampled), so each one's log-probability is read from the
very logits it was sampled from (`serve_logprobs`). The echoed prompt leaves out the BOS token the model
reads first: every echoed token has a log-probability, the first one's given BOS.

An embedding is the mean of the model's last hidden states over the text's tokens (BOS included), scaled
to length 1, from a second llama.cpp context on the same weights (memory-mapped, so shared) made with
`embedding=True` on first use: the chat context never pays for it. It holds `EMBEDDING_CTX` tokens; a
longer text is refused.

Callers run one call at a time (the server's turn): nothing here is thread-safe on its own.
"""

from __future__ import annotations

import codecs
import threading
from dataclasses import dataclass
from typing import Any

from .cancelling import Abort, abortable
from .embedded import EmbeddedLLM, quiet_native_stderr
from .serve_logprobs import TokenLogprob, last_row, logprob_of, prompt_logprobs
from .serve_requests import RequestError
from .tokenising import tokenize_pieces

__all__ = ["EMBEDDING_CTX", "Embedder", "TextReply", "complete"]

#: Tokens an embedding context holds (one text is embedded in one batch of at most this many).
EMBEDDING_CTX = 2048


@dataclass(frozen=True)
class TextReply:
    """One completed prompt. `logprobs`: OpenAI's legacy shape (tokens, token_logprobs, top_logprobs,
    text_offset) when asked for; `error`: "cancelled" or llama.cpp's failure (`text` is then "")."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    logprobs: dict[str, list[Any]] | None = None
    error: str | None = None


def _too_long(message: str, param: str) -> RequestError:
    return RequestError(400, f"{message}. Please reduce the length of the {param}.", param, "context_length_exceeded")


def complete(llm: EmbeddedLLM, prompt: str, *, max_tokens: int, stop: list[str], temperature: float,
             logprobs: int | None, echo: bool, cancel: threading.Event | None = None,
             cache_prompt: bool = True) -> TextReply:
    """`prompt` continued by at most `max_tokens` tokens (fewer at a stop sequence, the end of text or the
    context's end), with `logprobs` likeliest tokens per position when not None, the prompt first when
    `echo`. A prompt that leaves no room is a `RequestError`; `cancel` ends the call soon; `cache_prompt=False`
    evaluates the prompt afresh (`EmbeddedLLM.chat`)."""
    with llm.locked() as llama, abortable(llama, cancel) as abort:
        tokens = tokenize_pieces(llama, [(prompt, False)])
        room = llm.n_ctx - len(tokens)
        if room < (1 if max_tokens else 0):
            room_for_none = ", leaving no room for a reply" if max_tokens else ""
            raise _too_long(f"This model's maximum context length is {llm.n_ctx} tokens, and the prompt is "
                            f"{len(tokens)} tokens{room_for_none}", "prompt")
        if abort.requested:
            return TextReply("", len(tokens), 0, "stop", error="cancelled")
        llm.prompt_states.prepare(llama, tokens, llm.cache_owner, reuse=cache_prompt)
        try:
            echoed = prompt_logprobs(llama, tokens, logprobs) if echo and logprobs is not None else []
            made = _generate(llama, tokens, min(max_tokens, room), stop, temperature, llm.seed, logprobs, abort)
        except (RuntimeError, ValueError) as exc:  # llama_decode failed or was aborted: the cache is unknown
            llama.reset()
            error = "cancelled" if abort.requested else f"llama.cpp: {exc}"
            return TextReply("", len(tokens), 0, "stop", error=error)
        if abort.requested:
            return TextReply("", len(tokens), made.count, "stop", error="cancelled")
        pieces = [llama.detokenize([t]) for t in tokens[1:]] if echo else []
        shown = (prompt if echo else "") + made.text
        entries = echoed + made.rows
        chosen = pieces + made.pieces if echo else made.pieces
        table = _legacy(llama, entries, chosen, len(shown)) if logprobs is not None else None
    return TextReply(shown, len(tokens), made.count, made.finish, table)


@dataclass
class _Made:
    """What `_generate` made: the text (cut at a stop), each kept token's bytes and row, all tokens made."""

    text: str
    pieces: list[bytes]
    rows: list[TokenLogprob]
    count: int
    finish: str


def _generate(llama: Any, tokens: list[int], limit: int, stop: list[str], temperature: float, seed: int,
              k: int | None, abort: Abort) -> _Made:
    """Sample up to `limit` tokens after `tokens` as `EmbeddedLLM.chat` samples them, stopping at the end of
    text or at the first stop sequence (the text is cut before it, and the tokens past the cut dropped)."""
    import llama_cpp

    made = _Made("", [], [], 0, "length")
    if limit == 0:
        return made
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    longest = max((len(s) for s in stop), default=0)
    starts: list[int] = []  # where each kept token's text starts
    llama.set_seed(seed)
    stream = llama.generate(tokens, top_k=0, top_p=1.0, min_p=0.0, typical_p=1.0, temp=temperature,
                            repeat_penalty=1.0)
    try:
        for token in stream:
            abort.prompt_done()
            if abort.requested:
                break
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                made.finish = "stop"
                break
            made.count += 1
            if k is not None:
                made.rows.append(logprob_of(last_row(llama), token, k))
            piece = llama.detokenize([token])
            starts.append(len(made.text))
            made.pieces.append(piece)
            made.text += decoder.decode(piece)
            cut = _first_stop(made.text, stop, max(0, starts[-1] - longest + 1))
            if cut is not None:
                kept = sum(1 for s in starts if s < cut)
                made.text, made.finish = made.text[:cut], "stop"
                del made.pieces[kept:], made.rows[kept:]
                break
            if made.count >= limit:
                break
    finally:
        stream.close()
    return made


def _first_stop(text: str, stop: list[str], start: int) -> int | None:
    """Where the first stop sequence found in `text` at or after `start` begins, if any."""
    found = [i for i in (text.find(s, start) for s in stop) if i >= 0]
    return min(found) if found else None


def _legacy(llama: Any, entries: list[TokenLogprob], pieces: list[bytes], length: int) -> dict[str, list[Any]]:
    """OpenAI's legacy completions logprobs: each token's text, log-probability, likeliest tokens (with the
    token itself) and where its text starts in the reply (never past `length`)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    offset = 0
    table: dict[str, list[Any]] = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
    for entry, piece in zip(entries, pieces, strict=True):
        top: dict[str, float] = {}
        for token, value in (*entry.top, (entry.token, entry.logprob)):
            top.setdefault(_token_text(llama.detokenize([token])), value)
        table["tokens"].append(_token_text(piece))
        table["token_logprobs"].append(entry.logprob)
        table["top_logprobs"].append(top)
        table["text_offset"].append(min(offset, length))
        offset += len(decoder.decode(piece))
    return table


def _token_text(piece: bytes) -> str:
    """A token's text; a token that is part of a character alone is its bytes, written as OpenAI writes them."""
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes:" + "".join(f"\\x{b:02x}" for b in piece)


class Embedder:
    """Embeddings from the served model (with its adapter), in a context of its own made on first use."""

    def __init__(self, llm: EmbeddedLLM) -> None:
        self._llm = llm
        self._model: Any = None
        self.n_ctx = min(EMBEDDING_CTX, llm.n_ctx)

    def _load(self) -> Any:
        if self._model is None:
            import llama_cpp

            llm = self._llm
            with quiet_native_stderr(enabled=True):
                self._model = llama_cpp.Llama(
                    str(llm.model_path), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                    n_ctx=self.n_ctx, n_batch=self.n_ctx, n_ubatch=self.n_ctx, n_threads=llm.n_threads,
                    n_threads_batch=llm.n_threads, verbose=False,
                    lora_path=str(llm.lora_path) if llm.lora_path is not None else None,
                )
        return self._model

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """Each text's embedding (length 1) and the tokens read; a text over the context is a `RequestError`."""
        model = self._load()
        counts = [len(model.tokenize(text.encode("utf-8"), add_bos=True, special=False)) for text in texts]
        for i, count in enumerate(counts):
            if count > self.n_ctx:
                raise _too_long(f"An embedding reads at most {self.n_ctx} tokens, and input[{i}] is {count}", "input")
        vectors = [model.embed(text, normalize=True, truncate=False) for text in texts]
        return vectors, sum(counts)
