"""The embedded model with its vocabulary cut to the tokens the worlds' prompts use (`embedded:choice-vocab`).

Gemma 3's output layer spans 262,144 tokens: on the 2-core machine a candidate token's logits row costs
about 7 ms in llama.cpp and 1.4 ms more to normalise, as much again as the 18 transformer layers before it,
and the settings that choose score every candidate token. The worlds' prompts use under a thousand of those
tokens. This module writes a GGUF with the same layers whose token table (and so its tied output layer) keeps
only the listed tokens; the list is data (`models/gemma-3-270m-choice-vocab.json`, written by `pddlworlds
train vocab`, which also checks it), the model file is assembled from the default GGUF once, in the cache.

Why the cut model tokenises the worlds' text exactly as the full one does: llama.cpp's SentencePiece
tokeniser merges the adjacent pair of symbols with the best score whose joined text is a token, until none
is. The list keeps every token the prompts tokenise into and every token spelled inside one of those, so
every merge the full tokeniser makes on such text is offered to the cut one, and the merges it no longer
offers are ones the full tokeniser never made there: the same merges in the same order. Bytes (the fallback
for characters without a token) and the user-defined tokens (matched before any merge) are all kept, and
short printable pieces besides, so an unseen name still tokenises, if not always as the full model would.

Beyond the worlds the list was found in (a user's own PDDL, a name no world uses), the cut tokeniser could
split a text otherwise. So the cut model never tokenises alone: `CheckedVocabulary` tokenises every text
with both tokenisers (llama.cpp's C++, about a millisecond a prompt) and refuses a text they split
otherwise (`UncoveredText`, naming the text), and the model sees exactly the tokens the full one would.

What changes: a log-probability is normalised over the kept tokens, not all 262,144, so every one is at
least the full model's (the mass of the dropped tokens goes to the kept), and two candidates can rank
otherwise where the full model's rows give the dropped tokens unequal mass. LoRA adapters of the default
model apply unchanged (they touch the attention and MLP projections only). Measured in docs/agents.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..host import cache_dir as host_cache_dir
from .model_files import CHOICE_VOCAB, default_model_path

__all__ = [
    "CHOICE_VOCAB",
    "TOKEN_TYPES_KEPT",
    "CheckedVocabulary",
    "UncoveredText",
    "choice_vocab_keep",
    "choice_vocab_model_path",
    "kept_token_ids",
    "read_token_table",
    "vocab_file",
    "write_trimmed_gguf",
]

#: GGUF token types kept whole: user-defined (4, matched before the merges) and bytes (6, the fallback).
TOKEN_TYPES_KEPT = (4, 6)
_NORMAL = 1
_VOCAB_FILE = "gemma-3-270m-choice-vocab.json"


def vocab_file() -> Path:
    """The shipped token list (`models/` in a checkout, `pddlworlds/models/` installed)."""
    from ..worlds.catalogue import data_dir  # here: this module alone still loads in bare benchmark venvs

    return data_dir("models") / _VOCAB_FILE


def read_token_table(model: str | os.PathLike[str]) -> tuple[list[str], list[int], list[int]]:
    """A GGUF's token texts and token types, in id order, and its special token ids (bos, eos, ...)."""
    import gguf

    fields = gguf.GGUFReader(str(model)).fields
    specials = [int(f.contents()) for name, f in fields.items()
                if name.startswith("tokenizer.ggml.") and name.endswith("_token_id")]
    return list(fields["tokenizer.ggml.tokens"].contents()), list(fields["tokenizer.ggml.token_type"].contents()), specials


def kept_token_ids(tokens: Sequence[str], types: Sequence[int], used: Iterable[int], specials: Iterable[int] = ()) -> list[int]:
    """The ids a cut vocabulary keeps, ascending: `used` (the tokens the corpus tokenised into) and `specials`,
    every normal token spelled inside a used one (the merges that built it), every token of the types in
    `TOKEN_TYPES_KEPT`, and every normal token of at most two printable ASCII characters (`▁` is the space)."""
    index = {text: i for i, text in enumerate(tokens) if types[i] == _NORMAL}
    keep = set(specials) | {i for i, kind in enumerate(types) if kind in TOKEN_TYPES_KEPT}
    for i in used:
        keep.add(i)
        if types[i] != _NORMAL:
            continue
        text = tokens[i]
        for a in range(len(text)):
            for b in range(a + 1, len(text) + 1):
                j = index.get(text[a:b])
                if j is not None:
                    keep.add(j)
    keep |= {i for text, i in index.items() if len(text) <= 2 and all(_plain(c) for c in text)}
    return sorted(keep)


def _plain(char: str) -> bool:
    return char == "▁" or char == "\n" or (char.isascii() and char.isprintable())


def write_trimmed_gguf(source: str | os.PathLike[str], target: str | os.PathLike[str], keep: Sequence[int]) -> None:
    """Write `source` to `target` with only the tokens `keep` (ascending ids): the token table, scores and
    types cut and the special token ids renumbered; `token_embd` (tied to the output) keeps those rows; every
    other tensor and key as it was. A special token id the list drops is a ValueError."""
    import gguf
    import numpy as np

    keep = list(keep)
    if keep != sorted(set(keep)) or not keep:
        raise ValueError("keep must be ascending token ids, without repeats")
    reader = gguf.GGUFReader(str(source))
    renumber = {old: new for new, old in enumerate(keep)}
    writer = gguf.GGUFWriter(str(target), arch=str(reader.fields["general.architecture"].contents()))
    cut = ("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type")
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        value: Any = field.contents()
        if name in cut:
            value = [value[i] for i in keep]
        elif name.startswith("tokenizer.ggml.") and name.endswith("_token_id"):
            if value not in renumber:
                raise ValueError(f"{name} = {value} is not among the kept tokens")
            value = renumber[value]
        sub_type = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, value, field.types[0], sub_type=sub_type)
    rows = np.asarray(keep)
    for tensor in reader.tensors:
        data = tensor.data
        if tensor.name == "token_embd.weight":
            data = np.ascontiguousarray(data[rows])
        writer.add_tensor(tensor.name, data, raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


class UncoveredText(ValueError):
    """A text the cut vocabulary tokenises otherwise than the full model (a world the list was not made on)."""


class CheckedVocabulary:
    """The cut model's tokeniser (`llm.tokenising.Vocabulary`), checked on every text against the full model's:
    `cut` is the cut model's `llama_cpp.Llama`, `full` the default model's (`vocab_only` will do), `keep` the
    list (the cut model's token i is the full model's `keep[i]`)."""

    def __init__(self, cut: Any, full: Any, keep: Sequence[int]) -> None:
        self.cut, self.full, self.keep = cut, full, list(keep)

    def _checked(self, text: bytes, add_bos: bool, special: bool) -> tuple[list[int], bool]:
        """The cut model's ids of `text`, and whether they are the full model's through the list."""
        ids = list(self.cut.tokenize(text, add_bos=add_bos, special=special))
        keep = self.keep
        return ids, [keep[i] for i in ids] == list(self.full.tokenize(text, add_bos=add_bos, special=special))

    def covers(self, text: bytes, special: bool = False) -> bool:
        """Whether the cut model tokenises `text` as the full one does (the list's check, `train vocab`)."""
        return self._checked(text, False, special)[1]

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        ids, same = self._checked(text, add_bos, special)
        if not same:
            shown = text.decode("utf-8", errors="replace")
            raise UncoveredText(f"the cut vocabulary ({CHOICE_VOCAB}) tokenises this text otherwise than the full "
                                f"model, so it would not score it as the full model does: {shown[:120]!r}; "
                                f"play it on --llm embedded:full")
        return ids


def choice_vocab_keep(vocab: str | os.PathLike[str] | None = None) -> list[int]:
    """The full model's ids the token list `vocab` (default: the shipped one) keeps, ascending."""
    vocab = Path(vocab) if vocab is not None else vocab_file()
    return list(json.loads(vocab.read_text(encoding="utf-8"))["keep"])


def choice_vocab_model_path(vocab: str | os.PathLike[str] | None = None, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cut model for the token list `vocab` (default: the shipped one), written once from the default
    GGUF into the models cache (named by the list's digest; moved in atomically, so concurrent workers never
    read half a file). A list made for another base model is a ValueError."""
    from ..files import file_sha256

    vocab = Path(vocab) if vocab is not None else vocab_file()
    data = json.loads(vocab.read_text(encoding="utf-8"))
    base = default_model_path(cache_dir)
    digest = hashlib.sha256(vocab.read_bytes()).hexdigest()[:12]
    folder = Path(cache_dir) if cache_dir is not None else host_cache_dir("models")
    target = folder / f"{base.stem}-{CHOICE_VOCAB}-{digest}.gguf"
    if target.is_file():
        return target
    if data.get("base_sha256") != file_sha256(base):
        raise ValueError(f"{vocab}: made for base model sha256 {str(data.get('base_sha256'))[:16]}…, not {base.name}")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        write_trimmed_gguf(base, tmp, data["keep"])
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
