"""The token list of the cut-vocabulary model (`llm.vocab_trim`): the text the agents send, found by play.

The agents of the settings that choose play every world's problems with a seeded random pick among the
candidates (`PieceRecorder`, no model), and every text the embedded model would tokenise is kept: each
prompt whole, in the default model's plain format (the cut model is the default model, which takes that
format), the reply's start, every candidate. The list is the tokens the full model's tokeniser makes of
them and what `vocab_trim.kept_token_ids` adds.

The finding play is two: `per_split` problems of every split played for `steps` steps (the text an episode
writes as it goes: changes, summaries, subgoals), and every problem of every split opened (HiAgent's first
prompt in each setting: every shipped problem's objects and facts, none left to sampling).

The check is a second play, with another seed, on the problems after the finding play's in every split (and
the first ones again where a split has no more): each of its texts must tokenise under the cut model to the
same tokens as under the full one (`tokenisation_differences`, token ids compared through the list, in
llama.cpp's C++ tokeniser: no per-token Python). `pddlworlds train vocab` writes the list with the check's
figures and refuses a list that fails it.
"""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..agents import make_agent
from ..llm import Choice, Completion, Message
from ..llm.prompt_formats import plain_pieces
from ..llm.tokenising import tokenize_pieces
from ..registration import make_env
from ..worlds.catalogue import Domain, domains

__all__ = ["PieceRecorder", "VocabCheck", "build_vocabulary", "prompt_pieces", "tokenisation_differences"]

Piece = tuple[str, bool]  # (text, is a chat marker), as `llm.tokenising.tokenize_pieces` takes them


class PieceRecorder:
    """A stand-in model for a choosing setting: keeps every text it is given and picks a candidate at random
    (seeded); a summary call gets a fixed reply."""

    model_id = "piece-recorder"
    in_context_example = False

    def __init__(self, rng: random.Random, pieces: set[Piece]) -> None:
        self.rng = rng
        self.pieces = pieces

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def chat(self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (),
             temperature: float = 0.0) -> Completion:
        self.pieces.update(plain_pieces(messages))
        return Completion("Met: yes\nSummary: the goal", 1, 1, 0.0)

    def choose(self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "",
               rank: Any = None) -> Choice:
        self.pieces.update(plain_pieces(messages))
        if prefix:
            self.pieces.add((prefix, False))
        self.pieces.update((c, False) for c in continuations)
        index = self.rng.randrange(len(continuations))
        return Choice(index, tuple(0.0 for _ in continuations), 1, 1, 0.0, tuple(1 for _ in continuations))


def prompt_pieces(
    *, seed: int, per_split: int | None, steps: int, settings: Sequence[str], worlds: dict[str, Domain] | None = None,
    skip: int = 0, agents: Sequence[str] = ("hiagent", "standard"),
) -> set[Piece]:
    """Every text `agents` send in `settings` while playing `per_split` problems (None: all) of every split of
    every world, from the `skip`-th (from the first where a split has fewer), for `steps` steps, picks at
    random (seeded)."""
    pieces: set[Piece] = set()
    for name, domain in sorted((worlds if worlds is not None else domains()).items()):
        for split in domain.splits():
            problems = domain.problems(split)
            end = None if per_split is None else skip + per_split
            chosen = problems[skip:end] or problems[:per_split]
            for problem in chosen:
                for setting in settings:
                    for agent_name in agents:
                        env = make_env(domain.domain_file, domain.problem_file(problem, split),
                                       text_file=domain.text_file, max_episode_steps=steps, observation_mode="fluents")
                        rng = random.Random(f"{seed}/{name}/{split}/{problem}/{setting}/{agent_name}")
                        make_agent(agent_name, PieceRecorder(rng, pieces), setting=setting).run(env, seed=seed)
    return pieces


def tokenisation_differences(full: Any, cut: Any, keep: Sequence[int], pieces: Iterable[Piece]) -> list[Piece]:
    """The pieces the cut model (`llama_cpp.Llama`, `vocab_only` will do; its token i is the full model's
    `keep[i]`) tokenises otherwise than the full one: the check the cut model makes on every text it is sent."""
    from ..llm.vocab_trim import CheckedVocabulary

    checked = CheckedVocabulary(cut, full, keep)
    return [(text, marker) for text, marker in pieces if not checked.covers(text.encode("utf-8"), special=marker)]


@dataclass(frozen=True)
class VocabCheck:
    """How a token list was made and checked (written beside the ids)."""

    settings: list[str]
    build_seed: int
    build_per_split: int
    build_pieces: int
    used_tokens: int
    kept_tokens: int
    check_seed: int
    check_per_split: int
    check_pieces: int
    check_differences: int
    steps: int


def build_vocabulary(
    out: Path, *, settings: Sequence[str], seed: int = 1, per_split: int = 3, steps: int = 30,
    check_seed: int = 2, check_per_split: int = 3, worlds: dict[str, Domain] | None = None,
) -> VocabCheck:
    """Make the token list from one play, check it on another (other problems where a split has them, another
    seed), write it to `out` (JSON: the base model's sha256, the kept ids, the figures). A list the check
    finds a difference in is a ValueError naming the first pieces; nothing is written then."""
    import llama_cpp

    from ..files import file_sha256
    from ..llm.model_files import default_model_path
    from ..llm.vocab_trim import kept_token_ids, read_token_table, write_trimmed_gguf

    base = default_model_path()
    full = llama_cpp.Llama(str(base), n_ctx=64, vocab_only=True, verbose=False)
    pieces = prompt_pieces(seed=seed, per_split=per_split, steps=steps, settings=settings, worlds=worlds)
    pieces |= prompt_pieces(seed=seed, per_split=None, steps=1, settings=settings, worlds=worlds, agents=("hiagent",))
    used = {t for piece in pieces for t in tokenize_pieces(full, [piece], add_bos=False)}
    tokens, types, specials = read_token_table(base)
    keep = kept_token_ids(tokens, types, used, specials)
    checked = prompt_pieces(seed=check_seed, per_split=check_per_split, steps=steps, settings=settings,
                            worlds=worlds, skip=per_split)
    with tempfile.TemporaryDirectory(prefix="pddlworlds-vocab-") as folder:  # the cut model, for the check only
        trial = Path(folder) / "cut.gguf"
        write_trimmed_gguf(base, trial, keep)
        cut = llama_cpp.Llama(str(trial), n_ctx=64, vocab_only=True, verbose=False)
        differing = tokenisation_differences(full, cut, keep, sorted(checked))
        del cut
    figures = VocabCheck(list(settings), seed, per_split, len(pieces), len(used), len(keep), check_seed,
                         check_per_split, len(checked), len(differing), steps)
    if differing:
        shown = "; ".join(repr(text[:80]) for text, _ in differing[:3])
        raise ValueError(f"the cut vocabulary tokenises {len(differing)} of {len(checked)} check pieces otherwise "
                         f"than the full model, e.g. {shown}: raise --per-split or --steps")
    record = {"base_model": base.name, "base_sha256": file_sha256(base), **asdict(figures),
              "pieces_sha256": hashlib.sha256(json.dumps(sorted(pieces)).encode()).hexdigest(), "keep": keep}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return figures
