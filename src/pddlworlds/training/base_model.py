"""The base model a fit starts from: the GGUF read by transformers into float32 (cached as a float copy so
later runs load it in a fraction of a second), its tokenizer, and the cut vocabulary's rows of it
(`train fit --vocab`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..files import file_sha256
from ..host import cache_dir
from . import tree_attention

__all__ = [
    "TRAIN_HINT",
    "attention_geometry",
    "cut_embeddings",
    "cut_vocabulary_list",
    "float_copy_folder",
    "load_base_model",
    "load_tokenizer",
    "training_imports",
]

TRAIN_HINT = "pip install 'pddlworlds[train]'"


def training_imports() -> tuple[Any, Any, Any]:
    """(torch, transformers, peft), or an ImportError that says how to install them."""
    try:
        import peft
        import torch
        import transformers
    except ImportError as exc:
        raise ImportError(f"training needs torch, transformers and peft: {TRAIN_HINT}") from exc
    return torch, transformers, peft


def load_base_model(
    gguf_path: str | os.PathLike[str] | None = None, with_tokenizer: bool = True
) -> tuple[Any, Any, dict[str, str]]:
    """(model, tokenizer, info) in float32: from the float copy in the cache, else from the GGUF (which
    transformers dequantises, about a minute) and then cached. `info` has the GGUF's path and sha256.
    `with_tokenizer=False`: the tokenizer is None (a cut model's is not the one its data is tokenised with)."""
    torch, transformers, _ = training_imports()
    from ..llm import default_model_path

    attention = tree_attention.attention_implementation()
    path = Path(gguf_path) if gguf_path is not None else default_model_path()
    if not path.is_file():
        raise FileNotFoundError(f"base model GGUF not found: {path}")
    sha = file_sha256(path)
    folder = float_copy_folder(path, sha)
    info = {"gguf": str(path), "gguf_sha256": sha, "float_copy": str(folder)}
    auto_model, auto_tok = transformers.AutoModelForCausalLM, transformers.AutoTokenizer
    if (folder / "config.json").is_file():
        model = auto_model.from_pretrained(folder, dtype=torch.float32, attn_implementation=attention)
        if not with_tokenizer:
            return model, None, info
        cached = (folder / "tokenizer_config.json").is_file()
        return model, auto_tok.from_pretrained(folder) if cached else _gguf_tokenizer(path), info
    model = auto_model.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32, attn_implementation=attention
    )
    tokenizer = _gguf_tokenizer(path, model.config.model_type) if with_tokenizer else None
    # The weights are floats now: drop transformers' record of the GGUF quantizer, all of it (save_pretrained
    # refuses a model that names one; Trainer-based training, TRL's among it, refuses one flagged quantized).
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)  # also clears the model's `is_quantized`
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    if tokenizer is not None:
        tokenizer.save_pretrained(tmp)
    try:
        os.replace(tmp, folder)
    except OSError:  # another process cached it first
        shutil.rmtree(tmp, ignore_errors=True)
    return model, tokenizer, info


def float_copy_folder(gguf_path: str | os.PathLike[str], sha256: str | None = None) -> Path:
    """Where `load_base_model` keeps the float copy of `gguf_path` (`sha256`: the file's, when known)."""
    path = Path(gguf_path)
    return cache_dir("models") / f"{path.stem}-f32-{(sha256 or file_sha256(path))[:16]}"


def attention_geometry(base: Any) -> tuple[int, int | None, float | None]:
    """(layers, sliding window, final-logit softcap) of a loaded base model: what `sequence_loss` needs."""
    text_config = getattr(base.config, "text_config", base.config)
    return (text_config.num_hidden_layers, getattr(text_config, "sliding_window", None),
            getattr(text_config, "final_logit_softcapping", None))


def load_tokenizer(gguf_path: str | os.PathLike[str] | None = None) -> Any:
    """The base model's tokenizer alone (from the float copy when cached, else from the GGUF); `gguf_path`
    may also be a folder of a tokenizer's files (`save_pretrained`'s), for a machine without the GGUF."""
    _, transformers, _ = training_imports()
    from ..llm import default_model_path

    path = Path(gguf_path) if gguf_path is not None else default_model_path()
    if path.is_dir():
        return transformers.AutoTokenizer.from_pretrained(path)
    folder = float_copy_folder(path)
    if (folder / "tokenizer_config.json").is_file():
        return transformers.AutoTokenizer.from_pretrained(folder)
    return _gguf_tokenizer(path)


def _gguf_tokenizer(path: Path, model_type: str | None = None) -> Any:
    """The tokenizer transformers builds from a GGUF file. Named by type (the model's, else the file's
    architecture), it is built without transformers first reading the whole metadata with gguf's reader to
    find the type out: most of a minute over the 262,144-token vocabulary. The files saved are the same."""
    _, transformers, _ = training_imports()
    from ..llm.gguf_header import read_header

    kind = model_type or read_header(path).metadata.get("general.architecture")
    try:
        return transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, tokenizer_type=kind)
    except ValueError:  # a type transformers knows by another name: let it find out, the long way
        return transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


def cut_vocabulary_list(vocab: str | None) -> tuple[list[int] | None, dict[str, Any] | None]:
    """(the full model's ids a cut vocabulary keeps, what the summary records of it) for `--vocab`: a token
    list written by `train vocab`, or "choice-vocab" for the shipped one; (None, None) without one."""
    if vocab is None:
        return None, None
    from ..llm.model_files import CHOICE_VOCAB
    from ..llm.vocab_trim import choice_vocab_keep, vocab_file

    path = vocab_file() if vocab == CHOICE_VOCAB else Path(vocab)
    if not path.is_file():
        raise FileNotFoundError(f"--vocab {vocab}: no token list at {path} (write one with `pddlworlds train vocab`)")
    try:
        keep = choice_vocab_keep(path)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"--vocab {path}: not a token list written by `pddlworlds train vocab` ({exc})") from exc
    return keep, {"list": str(path), "sha256": file_sha256(path), "kept_tokens": len(keep)}


def cut_embeddings(model: Any, keep: list[int]) -> None:
    """Keep only `keep`'s rows of the model's embedding and (tied) output layer, in that order: the full
    model becomes the cut one eval plays on. A model whose vocabulary already has len(keep) tokens (loaded
    from the cut GGUF) is left as it is; any other size is a ValueError."""
    torch, _, _ = training_imports()
    embed = model.get_input_embeddings()
    rows = int(embed.weight.shape[0])
    if rows == len(keep):
        return
    if rows <= keep[-1]:
        raise ValueError(f"the base model has {rows} tokens, neither the cut vocabulary's {len(keep)} nor a full "
                         f"vocabulary it was cut from (it keeps id {keep[-1]})")
    index = torch.tensor(keep, dtype=torch.long)
    output = model.get_output_embeddings()
    tied = output is not None and output.weight is embed.weight
    embed.weight = torch.nn.Parameter(embed.weight.detach().index_select(0, index).clone(), requires_grad=False)
    embed.num_embeddings = len(keep)
    if output is not None:
        output.weight = embed.weight if tied else torch.nn.Parameter(
            output.weight.detach().index_select(0, index).clone(), requires_grad=False)
        output.out_features = len(keep)
    getattr(model.config, "text_config", model.config).vocab_size = len(keep)
