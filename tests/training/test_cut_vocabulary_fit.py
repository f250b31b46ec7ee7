"""Fitting on the cut vocabulary (`train fit --vocab`): the packer maps the full tokenizer's ids into the
list and leaves out a call it does not cover, the cut model scores as the full one restricted to the kept
tokens, and a fit on it trains, records the list, and resumes only with it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pddlworlds.llm import Message
from pddlworlds.training.packing import TokenizerVocabulary, pack_calls
from pddlworlds.training.trainer import TrainConfig, cut_vocabulary_list


class _ByteTokenizer:
    """A toy Hugging Face tokenizer (the call `TokenizerVocabulary` makes): one token a byte, BOS is 1."""

    bos_token_id = 1

    def __call__(self, text, add_special_tokens=False, split_special_tokens=True):
        return {"input_ids": list(text.encode("utf-8"))}


def _call(text: str, reply: str) -> tuple[list[Message], str, str]:
    return [Message(role="user", content=text)], reply, "\n"


def test_packing_maps_ids_into_the_cut_vocabulary_and_leaves_out_a_call_it_lacks() -> None:
    vocab = TokenizerVocabulary(_ByteTokenizer())
    covered = _call("ab", " ba")
    keep = sorted({1} | set("".join(_plain_text(covered)).encode("utf-8")))
    sequences, stats = pack_calls([covered, _call("abz", " a")], vocab, 4096, keep)
    assert stats.calls == 2 and stats.skipped_uncovered == 1 and stats.skipped_too_long == 0
    [sequence] = sequences
    full, _ = pack_calls([covered], vocab, 4096)
    assert [keep[i] for i in sequence.input_ids] == full[0].input_ids  # the same tokens, as places in the list
    assert max(sequence.input_ids) < len(keep)
    with pytest.raises(ValueError, match=r"none of its 1 calls is left to train on: 0 longer than --max-len "
                                         r"1024 tokens, 1 with a token the cut vocabulary toy does not keep"):
        _fit_sequences([_call("zzz", " z")], keep)


def _plain_text(call: tuple[list[Message], str, str]) -> list[str]:
    from pddlworlds.llm.prompt_formats import plain_pieces

    return [text for text, _ in plain_pieces(call[0])] + [call[1] + call[2]]


def _fit_sequences(calls, keep):
    from pddlworlds.training.trainer import build_sequences

    rows = [{"messages": [{"role": m.role, "content": m.content} for m in messages], "reply": reply, "stop": [stop],
             "domain": "blocksworld"} for messages, reply, stop in calls]
    return build_sequences(TrainConfig(data="toy", out="", vocab="toy"), _ByteTokenizer(), rows, keep)


def test_a_token_list_that_is_not_one_is_named(tmp_path: Path) -> None:
    assert cut_vocabulary_list(None) == (None, None)
    with pytest.raises(FileNotFoundError, match="--vocab .*absent.json: no token list"):
        cut_vocabulary_list(str(tmp_path / "absent.json"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"used_tokens": 3}))
    with pytest.raises(ValueError, match=r"--vocab .*bad.json: not a token list written by `pddlworlds train vocab`"):
        cut_vocabulary_list(str(bad))
    keep, info = cut_vocabulary_list("choice-vocab")
    assert keep == sorted(keep) and info["kept_tokens"] == len(keep) > 1000 and len(info["sha256"]) == 64


@pytest.mark.embedded
@pytest.mark.slow
def test_the_cut_model_scores_as_the_full_one_on_the_kept_tokens(tiny_base_model: str) -> None:
    import torch

    from pddlworlds.training.trainer import cut_embeddings, load_base_model

    keep, _ = cut_vocabulary_list("choice-vocab")
    full, tokenizer, _ = load_base_model(tiny_base_model, with_tokenizer=False)
    assert tokenizer is None
    cut, _, _ = load_base_model(tiny_base_model, with_tokenizer=False)
    cut_embeddings(cut, keep)
    assert cut.get_input_embeddings().weight.shape[0] == len(keep)
    assert cut.get_output_embeddings().weight is cut.get_input_embeddings().weight  # still tied
    ids = [2, *keep[100:120]]
    with torch.no_grad():
        want = full(input_ids=torch.tensor([ids])).logits[0][:, keep]
        got = cut(input_ids=torch.tensor([[keep.index(i) for i in ids]])).logits[0]
    assert torch.allclose(got, want, atol=1e-5)
    cut_embeddings(cut, keep)  # already cut: left as it is
    assert cut.get_input_embeddings().weight.shape[0] == len(keep)
    with pytest.raises(ValueError, match="the base model has 8475 tokens"):
        cut_embeddings(cut, keep[:-1])


@pytest.mark.embedded
@pytest.mark.slow
def test_a_fit_on_the_cut_vocabulary_trains_records_the_list_and_resumes_only_with_it(
    tmp_path: Path, tiny_base_model: str
) -> None:
    from pddlworlds.training.trainer import train

    data = tmp_path / "data"
    data.mkdir()
    rows = [{"episode": f"e{i}", "agent": "standard", "domain": "blocksworld", "problem": f"p{i}", "call": 0,
             "purpose": "action", "messages": [{"role": "user", "content": f"Goal: on: b{i} b2\nAction:"}],
             "reply": f" stack b{i} on b2", "stop": ["\n"]} for i in range(3)]
    (data / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = {"data": str(data), "steps": 1, "max_len": 128, "threads": 1, "base_model": tiny_base_model}
    cut = train(TrainConfig(out=str(tmp_path / "cut"), vocab="choice-vocab", **common), progress=False)
    full = train(TrainConfig(out=str(tmp_path / "full"), **common), progress=False)
    assert cut["vocabulary"]["kept_tokens"] == len(cut_vocabulary_list("choice-vocab")[0])
    assert full["vocabulary"] is None and cut["data"]["skipped_uncovered"] == 0
    assert cut["data"]["packed_tokens"] == full["data"]["packed_tokens"]
    first = {name: json.loads((tmp_path / name / "log.jsonl").read_text().splitlines()[0])["loss"]
             for name in ("cut", "full")}
    # the same logits, normalised over fewer tokens: the first step's cross-entropy is lower, never higher
    assert math.isfinite(first["cut"]) and 0 < first["cut"] < first["full"]
    assert (tmp_path / "cut" / "adapter.gguf").is_file()
    with pytest.raises(ValueError, match="another configuration .*vocab"):
        train(TrainConfig(out=str(tmp_path / "cut"), **{**common, "steps": 2}), progress=False)
