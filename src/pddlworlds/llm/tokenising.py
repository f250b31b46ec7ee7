"""A prompt as llama.cpp tokens: the prompt format's markers are control tokens, and nothing else is.

Text in a prompt comes from observations, the model's own replies and insight rules; tokenised with
special-token parsing, a reply that writes `<end_of_turn>` or an observation that quotes `<eos>` would put
control tokens in front of the model. So each piece is tokenised on its own: the format's markers with
special-token parsing, all text without it, and the lists are joined. llama.cpp itself tokenises a prompt
fragment by fragment between the special tokens it finds, so a prompt whose text quotes no special token
gets exactly the tokens it got as one string (the shipped adapter was trained on those).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["Vocabulary", "tokenize_pieces"]


class Vocabulary(Protocol):
    """What tokenises: `llama_cpp.Llama`, or training's wrapper of a Hugging Face tokenizer (so that
    training tokenises a call with this same function). `special`: whether control-token text becomes
    control tokens."""

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]: ...


def tokenize_pieces(llama: Vocabulary, pieces: Sequence[tuple[str, bool]], add_bos: bool = True) -> list[int]:
    """The tokens of a prompt given as (text, is a marker) pieces, BOS first when `add_bos`."""
    tokens: list[int] = list(llama.tokenize(b"", add_bos=add_bos, special=False)) if add_bos else []
    for text, marker in pieces:
        if text:
            tokens += llama.tokenize(text.encode("utf-8"), add_bos=False, special=marker)
    return tokens
