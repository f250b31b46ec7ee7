"""The observation space of the text environments: a Gymnasium `Text` space that async vector envs read
through shared memory each time, rather than once when the vector env is made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory

__all__ = ["ObservationText", "SharedTexts"]


class ObservationText(spaces.Text):
    """The observation space: a `spaces.Text` whose batch in an async vector env's shared memory is read
    each time it is used. Gymnasium decodes a `Text` buffer into strings once, when the vector env is made,
    so every later observation came back as that first, empty buffer ("aaaa..."); see `SharedTexts`."""


class SharedTexts(Sequence[str]):
    """The observations an async vector env's workers wrote into shared memory, decoded when read; a copy
    (what `AsyncVectorEnv` returns by default) is a plain tuple of strings, as the sync vector env gives."""

    def __init__(self, space: spaces.Text, buffer: Any, n: int):
        self._space, self._buffer, self._n = space, buffer, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(index)
        size = self._space.max_length
        codes = np.frombuffer(self._buffer.get_obj(), dtype=np.int32)[(index % self._n) * size :][:size]
        chars = self._space.character_list
        return "".join(chars[c] for c in codes if c < len(chars))

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(ObservationText)
def _read_shared_texts(space: ObservationText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(space, shared_memory, n)
