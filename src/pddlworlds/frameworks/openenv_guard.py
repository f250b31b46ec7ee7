"""The env-server's front door: what every request passes before OpenEnv's app sees it (`openenv_env`).

OpenEnv's app reads an HTTP body whole, takes any WebSocket frame as a JSON object, knows no key, and
answers a client that left with a logged traceback. `Guard` wraps it as plain ASGI (no framework of its
own): the API key on every request, each WebSocket session included; an HTTP body over `max_body_bytes`
refused with a 413 before it is read (by its Content-Length, or once a chunked body passes the bound);
a binary frame or a JSON message that is not an object answered with one line, the connection going on; a
close to a client already gone made quiet; and a session the reaper ended (`--session-timeout`) closed
with its reason, so that its connection can never play outside `--max-sessions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["CONNECTION", "REAPED_CLOSE_CODE", "Connection", "Guard"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The WebSocket close code of a session the server ended (1008: policy violation, RFC 6455).
REAPED_CLOSE_CODE = 1008
#: The close code of a session refused for its key.
UNAUTHORISED_CLOSE_CODE = 1008
KEY_HINT = "this server needs its API key: send the header 'Authorization: Bearer KEY'"


class Connection:
    """One WebSocket connection as the guard sees it; `end(reason)` closes it from elsewhere (the reaper)."""

    def __init__(self) -> None:
        self.ended = asyncio.Event()
        self.reason = ""

    def end(self, reason: str) -> None:
        self.reason = reason
        self.ended.set()


#: The connection whose ASGI call is running in this task (the endpoint runs in the guard's own task).
CONNECTION: contextvars.ContextVar[Connection | None] = contextvars.ContextVar("pddlworlds_connection", default=None)


class Guard:
    """ASGI middleware around OpenEnv's app (see the module's docstring). `api_key` None: no key needed."""

    def __init__(self, app: Any, api_key: str | None, max_body_bytes: int, reaping: bool = False) -> None:
        self.app = app
        self._key = api_key.encode() if api_key is not None else None
        self.max_body_bytes = max_body_bytes
        self.reaping = reaping  # sessions may be ended by the reaper: a receive also waits for that

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:  # lifespan: OpenEnv's reaper starts and stops there
            await self.app(scope, receive, send)

    def _key_given(self, scope: Scope) -> bool:
        if self._key is None:
            return True
        headers = dict(scope.get("headers") or [])
        scheme, _, token = headers.get(b"authorization", b"").partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self._key)

    # -- HTTP --------------------------------------------------------------------------
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._key_given(scope):
            await _answer(send, 401, KEY_HINT)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_body_bytes:
            await _answer(send, 413, self._too_large(f"{int(length):,} bytes"))
            return
        body, more, request_over = bytearray(), True, False
        while more:  # read here, at most the bound, then handed on whole (a body is small or refused)
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self.max_body_bytes:
                await _answer(send, 413, self._too_large(f"over {self.max_body_bytes:,} bytes"))
                return

        async def replay() -> Message:
            nonlocal request_over
            if request_over:
                return await receive()  # after the body: the disconnect, whenever it comes
            request_over = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    def _too_large(self, size: str) -> str:
        return (f"the request body is {size}; at most {self.max_body_bytes:,} bytes are accepted "
                "(an action is at most 1,024 characters)")

    # -- WebSocket ---------------------------------------------------------------------
    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._key_given(scope):
            await _refuse_session(receive, send, KEY_HINT)
            return
        connection = Connection()
        token = CONNECTION.set(connection)
        try:
            await self.app(scope, self._receiving(connection, receive, send), self._sending(connection, send))
        finally:
            CONNECTION.reset(token)

    def _receiving(self, connection: Connection, receive: Receive, send: Send) -> Receive:
        """`receive`, less the frames OpenEnv cannot read (answered here), and a disconnect once the
        connection was ended."""

        async def guarded() -> Message:
            while True:
                message = await (_unless_ended(connection, receive) if self.reaping else receive())
                if message["type"] != "websocket.receive":
                    return message
                refusal = _unreadable(message)
                if refusal is None:
                    return message
                error = {"type": "error", "data": {"message": refusal, "code": "VALIDATION_ERROR"}}
                await send({"type": "websocket.send", "text": json.dumps(error)})

        return guarded

    def _sending(self, connection: Connection, send: Send) -> Send:
        """`send`, closing an ended connection with its reason, and quiet about a close the client beat."""

        async def guarded(message: Message) -> None:
            if message["type"] == "websocket.close":
                if connection.ended.is_set():
                    message = {**message, "code": REAPED_CLOSE_CODE, "reason": _close_reason(connection.reason)}
                try:
                    await send(message)
                except (OSError, RuntimeError):  # the client closed first: a normal end, not an error
                    pass
                return
            await send(message)

        return guarded


async def _unless_ended(connection: Connection, receive: Receive) -> Message:
    """The next message, or a disconnect once `connection` was ended (its pending receive given up)."""
    if connection.ended.is_set():
        return {"type": "websocket.disconnect", "code": REAPED_CLOSE_CODE}
    incoming = asyncio.ensure_future(receive())
    ended = asyncio.ensure_future(connection.ended.wait())
    try:
        await asyncio.wait({incoming, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ended.cancel()
        if not incoming.done():
            incoming.cancel()
    if incoming.done() and not incoming.cancelled():
        return incoming.result()
    return {"type": "websocket.disconnect", "code": REAPED_CLOSE_CODE}


def _unreadable(message: Message) -> str | None:
    """Why a frame is no OpenEnv message, or None to hand it on (malformed JSON is OpenEnv's to answer)."""
    text = message.get("text")
    if text is None:
        return "a binary frame: send each message as a JSON object in a text frame"
    if text.lstrip()[:1] == "{":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
    return f'a message is a JSON object such as {{"type": "reset", "data": {{}}}}, not {kind}'


def _close_reason(reason: str) -> str:
    """A close frame's reason fits in 123 bytes (RFC 6455)."""
    data = reason.encode()
    return reason if len(data) <= 123 else data[:120].decode(errors="ignore") + "..."


async def _answer(send: Send, status: int, detail: str) -> None:
    """An HTTP answer of OpenEnv's shape: JSON `{"detail": ...}`."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse_session(receive: Receive, send: Send, detail: str) -> None:
    """Refuse a WebSocket session as OpenEnv refuses one past the bound: accepted, answered with the error
    (a client reads it as any other), closed with the reason; nothing of it reaches OpenEnv's app. (An HTTP
    401 at the handshake would tell OpenEnv's clients only the status, and uvicorn logs it as an error.)"""
    if (await receive())["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    error = {"type": "error", "data": {"message": detail, "code": "UNAUTHORIZED"}}
    with contextlib.suppress(OSError, RuntimeError):  # the client may be gone already
        await send({"type": "websocket.send", "text": json.dumps(error)})
        await send({"type": "websocket.close", "code": UNAUTHORISED_CLOSE_CODE, "reason": _close_reason(detail)})
