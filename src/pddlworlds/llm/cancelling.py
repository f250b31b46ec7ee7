"""Stopping a llama.cpp call from another thread, so that a client gone or a server stopping does not keep
the model busy until the reply ends.

Generation stops at the next token (the caller's stopping criterion reads `Abort.requested`). Prompt
evaluation, which takes minutes for a long prompt on a busy machine, stops between two of llama.cpp's graph
nodes through the context's abort callback (`llama_decode` then returns 2 and llama-cpp-python raises). That
callback is called from C for every graph node, about a thousand times a token, so it is set only until
the first token is sampled (`prompt_done`), and greedy replies are untouched by it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Abort", "abortable"]


class Abort:
    """The abort state of one call: `requested` once the event is set (never, without an event)."""

    def __init__(self, llama: Any, event: threading.Event | None) -> None:
        self._llama = llama
        self._event = event
        self._callback: Any = None

    @property
    def requested(self) -> bool:
        return self._event is not None and self._event.is_set()

    def arm(self) -> None:
        """Let llama.cpp stop a decode (prompt evaluation) once the event is set."""
        if self._event is None:
            return
        import llama_cpp

        event = self._event
        self._callback = llama_cpp.ggml_abort_callback(lambda _data: event.is_set())
        llama_cpp.llama_set_abort_callback(self._llama.ctx, self._callback, None)

    def prompt_done(self) -> None:
        """The prompt is evaluated: the stopping criterion takes over (one check per token, not per node)."""
        if self._callback is None:
            return
        import llama_cpp

        llama_cpp.llama_set_abort_callback(self._llama.ctx, llama_cpp.ggml_abort_callback(), None)
        self._callback = None


@contextlib.contextmanager
def abortable(llama: Any, event: threading.Event | None) -> Iterator[Abort]:
    """An `Abort` armed for the block (the caller holds the model's lock); disarmed however it ends."""
    abort = Abort(llama, event)
    abort.arm()
    try:
        yield abort
    finally:
        abort.prompt_done()
