"""A scripted stand-in for an OpenAI-compatible chat server, for offline tests.

It lets tests play whole agent episodes through the real ``openai`` client
(HTTP, JSON, retries) without a network or a model::

    from pddlworlds.testing.fake_openai import FakeOpenAIServer

    def responder(messages):            # list of {"role": ..., "content": ...}
        return "(pick-up a)" if "holding nothing" in messages[-1]["content"] else "(stack a b)"

    with FakeOpenAIServer(responder) as srv:      # or FakeOpenAIServer(["reply 1", "reply 2"])
        llm = OpenAICompatibleLLM("fake-model", base_url=srv.base_url)
        ...
        assert srv.chat_requests[0]["messages"][0]["role"] == "system"

Behaviour of ``POST /v1/chat/completions``:

* ``failures`` (e.g. ``[429, 500]``) are answered first, one per request, before
  any scripted reply is used. An ``int`` is returned as that HTTP status with an
  OpenAI-style error body; a string picks a broken 200 reply: ``"empty"``
  (content ""), ``"null"`` (content null), ``"no_choices"`` (choices []),
  ``"malformed"`` (body is not JSON) or ``"timeout"`` (sleeps ``hang_s`` and
  drops the connection without answering: a server that hangs). HTTP failures carry
  ``retry-after-ms: 1``, so a client's retries stay fast, and ``failure_message`` as the error's message
  (default "injected HTTP <status>"; a hostile server's text, for tests of how it is shown).
* Otherwise the reply is ``responder(messages)``, the next string of the
  script (a list), or the same text every time (a plain ``str``). The reply is
  cut at the first ``stop`` sequence of the request, as a real server would;
  ``max_tokens`` is ignored so scripted replies arrive intact.
* ``usage`` counts whitespace-separated words: ``prompt_tokens`` over all message
  contents, ``completion_tokens`` over the reply.

* ``rejects`` (e.g. ``["stop", "temperature"]``): a request carrying one of these parameters gets HTTP 400
  naming it (``error.param``), as reasoning-model endpoints answer; ``wants_max_completion_tokens``
  rejects ``max_tokens`` asking for ``max_completion_tokens``. ``reasoning`` adds that text as the
  message's ``reasoning_content``. A huge reply is a responder returning a huge string.

``GET /v1/models`` lists ``model`` and is never affected by ``failures``. With ``tokenize``, ``POST
/tokenize`` answers ``{"count": words, "tokens": [...]}`` like llama.cpp's and vLLM's servers.

A responder that raises, or a script that runs out, is answered with HTTP 400
(not retried by clients) and recorded in ``errors``; leaving the ``with`` block
normally re-raises the first such error so a broken script fails the test.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

Responder = Callable[[list[dict[str, Any]]], str]
"""Maps the request's ``messages`` (dicts with "role" and "content") to the reply text."""

BROKEN_REPLIES = ("empty", "null", "no_choices", "malformed", "timeout")


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as received: ``body`` is the parsed JSON or None, header names are lower-case."""

    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str]


class FakeOpenAIServer:
    """Threaded HTTP server on 127.0.0.1 (free port) answering like an OpenAI chat endpoint."""

    def __init__(
        self,
        responder: Responder | Iterable[str] | str,
        *,
        failures: Sequence[int | str] = (),
        model: str = "fake-model",
        hang_s: float = 2.0,
        rejects: Iterable[str] = (),
        wants_max_completion_tokens: bool = False,
        reasoning: str | None = None,
        tokenize: bool = False,
        failure_message: str | None = None,
    ) -> None:
        for failure in failures:
            if not isinstance(failure, int) and failure not in BROKEN_REPLIES:
                raise ValueError(
                    f"unknown failure {failure!r}; use an HTTP status or one of {BROKEN_REPLIES}"
                )
        if isinstance(responder, str):  # a constant reply, not a script of single characters
            constant = responder
            responder = lambda _messages: constant
        if callable(responder):
            self._responder: Responder | None = responder
            self._script: list[str] = []
        else:
            self._responder = None
            self._script = list(responder)
        self._failures = list(failures)
        self.model = model
        self.hang_s = hang_s
        self.rejects = tuple(rejects)
        self.wants_max_completion_tokens = wants_max_completion_tokens
        self.reasoning = reasoning
        self.tokenize = tokenize
        self.failure_message = failure_message
        self.requests: list[RecordedRequest] = []
        self.errors: list[Exception] = []
        self._lock = threading.Lock()
        self._replies_used = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True  # a hanging "timeout" reply must not block stop()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )  # short poll interval: stop() waits for at most one poll
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc_type is None and self.errors:
            raise self.errors[0]

    # -- introspection -------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` to an OpenAI client, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of all chat-completion requests received, in order (failed ones included)."""
        with self._lock:
            return [r.body or {} for r in self.requests if r.path.endswith("/chat/completions")]

    # -- request handling (called from handler threads) ----------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_failure(self) -> int | str | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    def _reply_for(self, messages: list[dict[str, Any]]) -> str:
        if self._responder is not None:
            return str(self._responder(messages))
        with self._lock:
            if self._replies_used >= len(self._script):
                raise RuntimeError(f"FakeOpenAIServer: scripted replies exhausted after {len(self._script)}")
            reply = self._script[self._replies_used]
            self._replies_used += 1
            return reply

    def _rejected(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The OpenAI-style error for the first request parameter this server rejects (None: accepted)."""
        if self.wants_max_completion_tokens and "max_tokens" in body:
            return {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        for name in self.rejects:
            if name in body:
                return {
                    "message": f"Unsupported parameter: '{name}' is not supported with this model.",
                    "type": "invalid_request_error",
                    "param": name,
                    "code": "unsupported_parameter",
                }
        return None

    def _record_error(self, error: Exception) -> None:
        with self._lock:
            self.errors.append(error)


def _words(text: object) -> int:
    return len(text.split()) if isinstance(text, str) else 0


def _cut_at_stop(text: str, stop: object) -> str:
    """Truncate at the earliest stop sequence; ``stop`` is a string or a list as in the OpenAI API."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    cut = min((i for s in stops if isinstance(s, str) and s and (i := text.find(s)) >= 0), default=len(text))
    return text[:cut]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send_json(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _headers(self) -> dict[str, str]:
        return {key.lower(): value for key, value in self.headers.items()}

    def _read_json(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def do_GET(self) -> None:
        self.fake._record(RecordedRequest("GET", self.path, None, self._headers()))
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": self.fake.model, "object": "model", "created": 0, "owned_by": "fake"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        body = self._read_json()
        self.fake._record(RecordedRequest("POST", self.path, body, self._headers()))
        if self.path.rstrip("/") == "/tokenize" and self.fake.tokenize:
            text = (body or {}).get("prompt") or (body or {}).get("content") or ""
            self._send_json(200, {"count": _words(text), "tokens": list(range(_words(text)))})
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        if body is None or not isinstance(body.get("messages"), list):
            self._send_json(400, {"error": {"message": "body must be JSON with a messages list"}})
            return
        rejected = self.fake._rejected(body)
        if rejected is not None:
            self._send_json(400, {"error": rejected})
            return
        failure = self.fake._next_failure()
        if isinstance(failure, int):
            # retry-after-ms keeps a client's retries fast in tests (the openai client honours it)
            headers = {"retry-after-ms": "1"}
            if failure == 429:
                headers["Retry-After"] = "0"
            message = self.fake.failure_message or f"injected HTTP {failure}"
            error = {"message": message, "type": "fake_failure", "code": failure}
            self._send_json(failure, {"error": error}, headers)
            return
        if failure == "timeout":
            time.sleep(self.fake.hang_s)
            self.close_connection = True
            return
        if failure == "malformed":
            self._send_raw(200, b"<html>this is not JSON</html>", "application/json")
            return
        messages: list[dict[str, Any]] = body["messages"]
        if failure is None:
            try:
                reply: str | None = _cut_at_stop(self.fake._reply_for(messages), body.get("stop"))
            except Exception as exc:  # noqa: BLE001 -- surfaced to the test via FakeOpenAIServer.errors / __exit__
                self.fake._record_error(exc)
                self._send_json(
                    400, {"error": {"message": f"fake server: {exc!r}", "type": "responder_error"}}
                )
                return
        else:
            reply = "" if failure == "empty" else None
        message: dict[str, Any] = {"role": "assistant", "content": reply}
        if self.fake.reasoning is not None:
            message["reasoning_content"] = self.fake.reasoning
        choices = [] if failure == "no_choices" else [{"index": 0, "message": message, "finish_reason": "stop"}]
        prompt_tokens = sum(_words(m.get("content")) for m in messages if isinstance(m, dict))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": _words(reply)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send_json(
            200,
            {
                "id": f"chatcmpl-fake-{len(self.fake.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.fake.model),
                "choices": choices,
                "usage": usage,
            },
        )
