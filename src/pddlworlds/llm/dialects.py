"""What differs between OpenAI-compatible servers, found out once by asking them.

- **Tokenize route**: `pddlworlds serve` has `POST /pddlworlds/tokenize/count` (text counted as text, as
  in process); llama-cpp-python's server has `POST /extras/tokenize/count` (it parses special tokens in
  the text); llama.cpp's own server and vLLM have `POST /tokenize` (asked not to parse them); OpenAI has none. Counts leave out what the server adds to any text (the
  BOS token: the count of "" is subtracted), as the in-process backend counts.
- **Sampling defaults**: llama-cpp-python's server applies a repeat penalty of 1.1, top-k 40 and min-p
  0.05 unless a request names them; a request to it names the in-process backend's values, so greedy
  decoding is the same there and here.
- **The served model**: `pddlworlds serve` answers `GET /pddlworlds/model` (model id and digest, prompt
  format, context size, whether agents should show their in-context example).

Everything else (`usage`, `stop`, errors for a prompt over the context) follows OpenAI's API on all of
them; the backend handles those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LLAMA_CPP_PYTHON_SAMPLING", "SERVED_IDENTITY", "ServerTraits", "probe_server"]

#: The in-process backend's sampler, in the fields llama-cpp-python's server reads.
LLAMA_CPP_PYTHON_SAMPLING = {"repeat_penalty": 1.0, "top_k": 0, "min_p": 0.0}
_SERVED_INFO = "/pddlworlds/model"
#: What of `pddlworlds serve`'s description joins a run's configuration (compared on resume): what decides
#: the replies, not how the server runs (its context size, its name).
SERVED_IDENTITY = ("model_id", "model_sha256", "prompt_format", "in_context_example")


@dataclass(frozen=True)
class ServerTraits:
    """What a server showed of itself: its tokenizer (`tokenizer` describes it, `count(text)` counts),
    the fields every request adds, and the `pddlworlds serve` description of its model (None elsewhere)."""

    tokenizer: str | None = None
    count: Callable[[str], int] | None = None
    request_fields: dict[str, Any] = field(default_factory=dict)
    served: dict[str, Any] | None = None


def _tokenize_routes(model: str) -> list[tuple[str, str, Callable[[str], dict[str, Any]]]]:
    """(server, path, body of a text) for each tokenize route, most specific first."""
    return [
        ("pddlworlds serve", "/pddlworlds/tokenize/count", lambda text: {"model": model, "input": text}),
        ("llama-cpp-python", "/extras/tokenize/count", lambda text: {"model": model, "input": text}),
        ("llama.cpp/vLLM", "/tokenize", lambda text: {"model": model, "prompt": text, "content": text,
                                                      "add_special": False, "parse_special": False}),
    ]


def _count_in(data: Any) -> int:
    if isinstance(data, dict) and isinstance(data.get("count"), int):
        return int(data["count"])
    if isinstance(data, dict) and isinstance(data.get("tokens"), list):
        return len(data["tokens"])
    raise ValueError(f"no token count in the tokenize reply: {str(data)[:200]}")


def probe_server(post: Callable[[str, dict[str, Any]], Any], get: Callable[[str], Any], root: str,
                 model: str) -> ServerTraits:
    """Ask the server at `root` (its base URL without `/v1`) what it is. `post(url, body)` and `get(url)`
    return the decoded JSON reply or raise; a route that fails is taken as absent."""
    served: dict[str, Any] | None = None
    try:
        reply = get(root + _SERVED_INFO)
        served = reply if isinstance(reply, dict) and "model_id" in reply else None
    except Exception:  # noqa: BLE001 - no such route (404), another reply shape
        served = None
    for server, path, body in _tokenize_routes(model):
        url = root + path

        def raw(text: str, url: str = url, body: Callable[[str], dict[str, Any]] = body) -> int:
            return _count_in(post(url, body(text)))

        try:
            baseline = raw("")
            raw("probe")
        except Exception:  # noqa: BLE001, S112 - no such endpoint (404), another reply shape, unreachable
            continue
        fields = dict(LLAMA_CPP_PYTHON_SAMPLING) if server == "llama-cpp-python" else {}  # serve samples in process
        return ServerTraits(
            tokenizer=f"the server's tokenizer ({url}, {server})",
            count=lambda text, raw=raw, baseline=baseline: raw(text) - baseline,
            request_fields=fields,
            served=served,
        )
    return ServerTraits(served=served)
