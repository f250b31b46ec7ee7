"""Turning chat messages into one prompt, for backends that complete text rather than chats.

A prompt is also given as pieces, (text, marker): the format's own markers (`<start_of_turn>`) apart from
the text of the messages, so that a backend can make the markers control tokens and nothing else (a message
that quotes `<start_of_turn>` stays text). The pieces joined are the prompt string.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import Message

__all__ = ["Piece", "format_gemma_chat", "format_plain", "gemma_chat_pieces", "plain_pieces"]

#: One piece of a prompt: (text, whether it is one of the format's markers).
Piece = tuple[str, bool]
_START, _END = "<start_of_turn>", "<end_of_turn>"


def format_gemma_chat(messages: Sequence[Message]) -> str:
    """Render Gemma 3's chat template (as in its tokenizer_config.json), without the BOS token.

    Needed because the shipped GGUF carries no ``tokenizer.chat_template``, so llama-cpp's
    ``create_chat_completion`` would silently fall back to the Llama-2 format. A system
    message is folded into the first user turn, as Gemma's template does.
    """
    return "".join(text for text, _ in gemma_chat_pieces(messages))


def gemma_chat_pieces(messages: Sequence[Message]) -> list[Piece]:
    """`format_gemma_chat` as pieces: the turn markers apart from the turns' text."""
    turns = list(messages)
    system = ""
    if turns and turns[0].role == "system":
        system = turns[0].content.strip() + "\n\n"
        turns = turns[1:]
        if not turns:
            turns = [Message("user", "")]
    pieces: list[Piece] = []
    for i, message in enumerate(turns):
        if message.role not in ("user", "assistant"):
            raise ValueError(f"unsupported role {message.role!r} at position {i}; use system/user/assistant")
        role = "model" if message.role == "assistant" else "user"
        prefix = system if i == 0 else ""
        pieces += [(_START, True), (f"{role}\n{prefix}{message.content.strip()}", False), (_END, True), ("\n", False)]
    pieces += [(_START, True), ("model\n", False)]
    return pieces


def format_plain(messages: Sequence[Message]) -> str:
    """The messages as one continuous text, for a pretrained (not instruction-tuned) model.

    A base model does not know chat turns: wrapped in Gemma's chat template, the default 270M model
    repeats the start of the prompt, while the same text as a plain document that ends on the cue
    ("...Action:") gets continued with an action. A cue that does not end on "Action:" gets a new line.
    """
    text = "\n\n".join(m.content.strip() for m in messages if m.content.strip())
    return text if text.endswith("Action:") else text + "\n"


def plain_pieces(messages: Sequence[Message]) -> list[Piece]:
    """`format_plain` as pieces: one piece of text, no markers."""
    return [(format_plain(messages), False)]
