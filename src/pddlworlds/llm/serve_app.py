"""The HTTP side of `pddlworlds serve`: an ASGI app (Starlette, from the server extra) over one loaded
`EmbeddedLLM`, made to be exposed.

- With an API key, every route asks for it (`Authorization: Bearer KEY`) before a byte of the body is read.
- Bodies are bounded (`serve_requests.body_limit`) and checked field by field before the model is touched;
  a bad one is a 4xx naming the field, never a 500.
- Routes: `/v1/chat/completions`, `/v1/completions` (text, `logprobs`, `echo`), `/v1/embeddings`,
  `/v1/responses` (text in, text out), `/v1/models`, and ours (`INFO_PATH`, `COUNT_PATH`); the bodies they
  answer with: `serve_replies`; the model's work behind the text routes: `serve_model`.
- One request runs at a time (the model has one context); the others wait their turn in arrival order.
  A request with several prompts or texts holds its turn for all of them.
- A client that disconnects, while it waits or while its reply is generated, frees the model: its call is
  cancelled (`EmbeddedLLM.chat(cancel=...)`), and the next request starts.
- `stop()` (the server's SIGINT/SIGTERM) cancels the call under way and answers the waiting ones 503;
  `cut` counts the requests left without a reply by it. `StoppableServer` is uvicorn's server calling it.
"""

from __future__ import annotations

import functools
import hmac
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .base import Completion
from .embedded import EmbeddedLLM
from .serve_model import Embedder, complete
from .serve_replies import chat_body, completion_body, embeddings_body, response_body
from .serve_requests import (
    ChatCall,
    CompletionCall,
    RequestError,
    body_limit,
    discard_body,
    parse_chat,
    parse_completion,
    parse_count,
    parse_embeddings,
    parse_json,
    parse_responses,
    read_body,
)

__all__ = ["COUNT_PATH", "INFO_PATH", "ServedModel", "StoppableServer", "exit_at_once", "served_info"]

#: The route that describes the served model (JSON).
INFO_PATH = "/pddlworlds/model"
#: Token counts as the in-process backend counts: message text as text, special-token names included.
COUNT_PATH = "/pddlworlds/tokenize/count"
#: What a client that disconnected is answered (nobody reads it; nginx's "client closed request").
_CLIENT_GONE = 499


def served_info(llm: EmbeddedLLM, name: str) -> dict[str, Any]:
    """What `GET /pddlworlds/model` answers (the OpenAI-compatible backend records it and follows
    `in_context_example`)."""
    return {
        "name": name,
        "model_id": llm.model_id,
        "model_sha256": llm.model_sha256,
        "prompt_format": llm.prompt_format,
        "n_ctx": llm.n_ctx,
        "in_context_example": llm.in_context_example,
    }


class ServedModel:
    """The model behind the routes, the turn that requests wait for, and what a stop has cut."""

    def __init__(self, llm: EmbeddedLLM, name: str, api_key: str | None = None) -> None:
        self.llm = llm
        self.name = name
        self.limit = body_limit(llm.n_ctx)
        self.info = served_info(llm, name)
        self.embedder = Embedder(llm)  # its context is made by the first embeddings request
        self._key = api_key.encode() if api_key is not None else None
        self._turn = anyio.Lock()  # first come, first served
        self._calls: set[threading.Event] = set()
        self.stopping = False
        #: Requests the stop left without a reply (the call it cancelled, those waiting their turn).
        self.cut = 0

    def stop(self) -> None:
        """Cancel the call under way and refuse the rest (called from the event loop's thread)."""
        self.stopping = True
        for cancel in list(self._calls):
            cancel.set()

    def app(self) -> Any:
        """The ASGI app: the routes behind the key check."""
        routes = [
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/completions", self._completions, methods=["POST"]),
            Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            Route("/v1/responses", self._responses, methods=["POST"]),
            Route(INFO_PATH, self._info, methods=["GET"]),
            Route(COUNT_PATH, self._count, methods=["POST"]),
        ]
        handlers = {RequestError: _refused, HTTPException: _http_error}
        inner = Starlette(routes=routes, exception_handlers=handlers)

        async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self._guard(inner, scope, receive, send)

        return guarded

    # -- the key, and a stop that outlasts uvicorn's grace period -------------------------
    async def _guard(self, inner: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self._key is not None and not self._key_given(scope):
            refusal = RequestError(401, "this server needs its API key: send the header 'Authorization: "
                                   "Bearer KEY'", code="invalid_api_key")
            await discard_body(Request(scope, receive))
            await _refused(None, refusal)(scope, receive, send)
            return
        try:
            await inner(scope, receive, send)
        except anyio.get_cancelled_exc_class():
            if not self.stopping:
                raise
            self.cut += 1  # uvicorn's grace period ran out on this request: it was cut, quietly

    def _key_given(self, scope: dict[str, Any]) -> bool:
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"authorization", b"")
        scheme, _, token = given.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self._key or b"")

    # -- routes ------------------------------------------------------------------------
    async def _models(self, _request: Request) -> Response:
        model = {"id": self.name, "object": "model", "created": 0, "owned_by": "pddlworlds"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _info(self, _request: Request) -> Response:
        return JSONResponse(self.info)

    async def _count(self, request: Request) -> Response:
        text = parse_count(parse_json(await read_body(request, self.limit)))
        return JSONResponse({"count": await anyio.to_thread.run_sync(self.llm.count_tokens, text)})

    async def _chat(self, request: Request) -> Response:
        call = parse_chat(parse_json(await read_body(request, self.limit)))
        reply = await self._answer(request, functools.partial(self._chat_call, call))
        if isinstance(reply, Response):
            return reply
        return self._chat_reply(reply, "messages", lambda r: chat_body(r, self.name))

    async def _responses(self, request: Request) -> Response:
        body = parse_json(await read_body(request, self.limit))
        call = parse_responses(body)
        reply = await self._answer(request, functools.partial(self._chat_call, call))
        if isinstance(reply, Response):
            return reply
        return self._chat_reply(reply, "input", lambda r: response_body(r, body, call.temperature, self.name))

    async def _completions(self, request: Request) -> Response:
        call = parse_completion(parse_json(await read_body(request, self.limit)))
        replies = await self._answer(request, functools.partial(self._complete_all, call))
        if isinstance(replies, Response):
            return replies
        failed = next((r.error for r in replies if r.error is not None), None)
        return self._failed(failed) if failed is not None else JSONResponse(completion_body(replies, self.name))

    async def _embeddings(self, request: Request) -> Response:
        call = parse_embeddings(parse_json(await read_body(request, self.limit)))
        made = await self._answer(request, lambda _cancel: self.embedder.embed(call.inputs))
        if isinstance(made, Response):
            return made
        return JSONResponse(embeddings_body(*made, call.base64, self.name))

    # -- the model's work, one request at a time -----------------------------------------
    def _chat_call(self, call: ChatCall, cancel: threading.Event) -> Completion:
        try:
            return self.llm.chat(call.messages, max_tokens=call.max_tokens or self.llm.n_ctx, stop=call.stop,
                                 temperature=call.temperature, cancel=cancel, cache_prompt=call.cache_prompt)
        except ValueError as exc:  # the prompt format cannot place a message (Gemma's: a system one past the first)
            raise RequestError(400, f"the messages do not fit the model's prompt format: {exc}", "messages") from None

    def _complete_all(self, call: CompletionCall, cancel: threading.Event) -> list[Any]:
        replies = []
        for prompt in call.prompts:
            replies.append(complete(self.llm, prompt, max_tokens=call.max_tokens, stop=call.stop,
                                    temperature=call.temperature, logprobs=call.logprobs, echo=call.echo,
                                    cancel=cancel, cache_prompt=call.cache_prompt))
            if replies[-1].error is not None:
                break
        return replies

    async def _answer(self, request: Request, work: Callable[[threading.Event], Any]) -> Any:
        """`work(cancel)`'s result, run in a thread in this request's turn, or the response that replaces
        it: 499 for a client gone meanwhile, the refusal `work` raised, 503 when a stop cut it."""
        cancel = threading.Event()
        replies: list[Any] = []
        async with anyio.create_task_group() as group:

            async def answer() -> None:
                replies.append(await self._run(work, cancel))
                group.cancel_scope.cancel()  # the reply is ready: stop watching the connection

            group.start_soon(answer)
            group.start_soon(_watch_disconnect, request, cancel, group.cancel_scope)
        if not replies:
            return Response(status_code=_CLIENT_GONE)
        if isinstance(replies[0], RequestError):
            return _refused(request, replies[0])
        return replies[0]

    async def _run(self, work: Callable[[threading.Event], Any], cancel: threading.Event) -> Any:
        async with self._turn:
            if self.stopping:
                self.cut += 1
                return _stopping()
            self._calls.add(cancel)
            try:
                reply = await anyio.to_thread.run_sync(work, cancel)
            except RequestError as refusal:
                return refusal
            finally:
                self._calls.discard(cancel)
        replies = reply if isinstance(reply, list) else [reply]
        if self.stopping and any(getattr(r, "error", None) == "cancelled" for r in replies):
            self.cut += 1
            return _stopping()
        return reply

    def _chat_reply(self, reply: Completion, param: str, body: Callable[[Completion], dict[str, Any]]) -> Response:
        """The chat's reply in `body`'s shape, or the refusal or failure it was (`param`: what held the prompt)."""
        if reply.error is not None and reply.error.startswith("prompt of"):
            message = (f"This model's maximum context length is {self.llm.n_ctx} tokens, and the messages alone "
                       f"are {reply.prompt_tokens} tokens. Please reduce the length of the {param}.")
            return _refused(None, RequestError(400, message, param, "context_length_exceeded"))
        if reply.error is not None and (reply.error.startswith("llama.cpp:") or reply.error == "cancelled"):
            return self._failed(reply.error)
        return JSONResponse(body(reply))

    def _failed(self, error: str) -> Response:
        """A 500 for llama.cpp's failure; for a call cancelled by its client, who is gone, nothing."""
        if error == "cancelled":
            return Response(status_code=_CLIENT_GONE)
        print(f"pddlworlds serve: a request failed in the model: {error}", file=sys.stderr, flush=True)
        return _refused(None, RequestError(500, error))


class StoppableServer(uvicorn.Server):  # type: ignore[misc]
    """uvicorn's server whose first SIGINT/SIGTERM also stops the model's work (`on_stop`) and whose second
    ends the process at once. The signal is kept in `stopped_by`, not raised again after the shutdown as
    uvicorn does, so that `serve` decides the exit status."""

    def __init__(self, config: uvicorn.Config, on_stop: Any) -> None:
        super().__init__(config)
        self.on_stop = on_stop
        self.stopped_by: int | None = None

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.stopped_by is not None:
            exit_at_once(sig, frame)
        self.stopped_by = sig
        self.on_stop()
        self.should_exit = True


def exit_at_once(sig: int, _frame: Any = None) -> None:
    """End the process now, on a signal while the server is stopping or before it serves: no request is
    in a state worth waiting for."""
    print(f"pddlworlds serve: stopped at once by {signal.Signals(sig).name}", file=sys.stderr, flush=True)
    os._exit(128 + sig)


async def _watch_disconnect(request: Request, cancel: threading.Event, scope: anyio.CancelScope) -> None:
    """Wait for the client to go (the body is read, so the next ASGI message is a disconnect), then cancel
    its call and stop waiting for it."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
    cancel.set()
    scope.cancel()


def _stopping() -> RequestError:
    return RequestError(503, "pddlworlds serve is stopping; the request was not finished", code="server_stopping")


def _refused(_request: Request | None, error: Exception) -> Response:
    assert isinstance(error, RequestError)
    return JSONResponse(error.body(), status_code=error.status, headers=_auth_header(error.status))


def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's 404 and 405 in OpenAI's error shape."""
    assert isinstance(error, HTTPException)
    words = {404: "no such route", 405: "method not allowed on this route"}.get(error.status_code, error.detail)
    return _refused(request, RequestError(error.status_code, f"{words}: {request.method} {request.url.path}"))


def _auth_header(status: int) -> dict[str, str] | None:
    return {"WWW-Authenticate": "Bearer"} if status == 401 else None
