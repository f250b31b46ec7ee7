"""`pddlworlds export` (`frameworks.expert_data`): the expert's episodes as a dataset.

- The CLI writes JSON Lines and Parquet, the same bytes every time; `datasets.load_dataset` reads both to
  the same rows; each row replays through Gymnasium (its action is valid there, the next row's last message
  is the observation it gave, the progress is the environment's), the optimal plan reaches the goal in its
  proven length, and an unsolvable problem of a mixed split is one claim of `impossible`.
- Held-out splits are left out unless named. Every world of the catalogue with a stored plan exports its
  shortest plan's episode, which opens with the verifiers rollout's chat (heavy: CI's step of its own).
- A TRL SFT step runs on the exported rows with the tiny model, its loss on the expert's reply only.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pddlworlds.frameworks.chat import action_of
from pddlworlds.frameworks.episodes import EpisodeOptions, held_out, make_env, reset_kwargs
from pddlworlds.frameworks.expert_data import COLUMNS, ExportRequest, expert_rows
from pddlworlds.planning.store import optimal_lengths, stored_plan
from pddlworlds.unsolvable.claim import IMPOSSIBLE_ACTION
from pddlworlds.worlds.catalogue import domains, get_domain

DOMAIN, SPLIT = "blocksworld", "agentboard-mixed"
SOLVABLE, UNSOLVABLE = "problem1", "problem2-missing-b1"


def export_cli(*paths: Path) -> None:
    from pddlworlds.cli import main

    outs = [arg for path in paths for arg in ("--out", str(path))]
    assert main(["export", "--domains", DOMAIN, "--splits", SPLIT, "--problems", f"{SOLVABLE},{UNSOLVABLE}", *outs]) == 0


def load(path: Path, cache: Path) -> list[dict]:
    from datasets import load_dataset

    kind = "json" if path.suffix == ".jsonl" else "parquet"
    return load_dataset(kind, data_files=str(path), split="train", cache_dir=str(cache)).to_list()


def test_export_writes_the_same_rows_every_time_and_they_replay(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("datasets")
    pytest.importorskip("pyarrow")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    export_cli(tmp_path / "a.jsonl", tmp_path / "a.parquet")
    export_cli(tmp_path / "b.jsonl", tmp_path / "b.parquet")
    for suffix in (".jsonl", ".parquet"):
        assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()
    rows = load(tmp_path / "a.jsonl", tmp_path / "cache")
    assert rows == load(tmp_path / "a.parquet", tmp_path / "cache")
    assert list(rows[0]) == list(COLUMNS)
    episodes = {p: [r for r in rows if r["problem"] == p] for p in (SOLVABLE, UNSOLVABLE)}
    for problem, steps in episodes.items():
        options = EpisodeOptions(domain=DOMAIN, split=SPLIT, problem=problem, max_steps=len(steps))
        env = make_env(options)
        env.reset(**reset_kwargs(options))
        for index, row in enumerate(steps, start=1):
            assert row["step"] == index and row["id"] == f"{DOMAIN}/{SPLIT}/{problem}/{index}"
            assert [m["role"] for m in row["prompt"]] == ["system", "user"] + ["assistant", "user"] * (index - 1)
            if index > 1:  # one history, growing by the last reply and the observation it got
                before = steps[index - 2]
                assert row["prompt"] == before["prompt"] + before["completion"] + row["prompt"][-1:]
            assert action_of(row["completion"][0]["content"]) == row["action"]
            assert row["action"] in row["valid_actions"] or row["action"] == IMPOSSIBLE_ACTION
            observation, _, terminated, _, info = env.step(row["action"])
            assert info["action_valid"] and row["progress_after"] == info["progress"]
            if index < len(steps):
                assert steps[index]["prompt"][-1]["content"] == f"Observation: {observation}"
                assert steps[index]["progress_before"] == row["progress_after"]
        assert terminated and info["success"]
        env.close()
    plan = episodes[SOLVABLE]
    assert len(plan) == plan[0]["optimal_length"] == len(stored_plan(DOMAIN, SOLVABLE))
    assert [r["steps_to_go"] for r in plan] == list(range(len(plan), 0, -1))
    assert all(r["solvable"] for r in plan) and plan[-1]["progress_after"] == 1.0
    [claim] = episodes[UNSOLVABLE]
    assert claim["action"] == IMPOSSIBLE_ACTION and claim["solvable"] is False and claim["optimal_length"] is None


def test_held_out_splits_are_exported_only_when_named() -> None:
    default = ExportRequest().chosen_splits()
    expected = [(name, s) for name, d in domains().items() for s in d.splits() if not held_out(s)]
    assert default == expected and not any(held_out(split) for _, split in default)
    assert any(held_out(s) for d in domains().values() for s in d.splits())  # there is one to leave out
    named = ExportRequest(domains=[DOMAIN], splits=["heldout"]).episodes()
    assert {(o.domain, o.split) for o in named} == {(DOMAIN, "heldout")}
    assert [o.problem for o in named] == get_domain(DOMAIN).problems("heldout")
    with pytest.raises(ValueError, match="^no domain of blocksworld has a split 'nosuch'$"):
        ExportRequest(domains=[DOMAIN], splits=["nosuch"]).episodes()


@pytest.mark.heavy  # 42 worlds, some large to ground: 1 to 40 s each on 2 shared cores
@pytest.mark.parametrize("world", list(domains()))
def test_every_world_plays_through_both_doors_in_one_chat(world: str) -> None:
    """Every world of the catalogue, on its shortest stored plan in its first split not held out: the export's
    episode reaches the goal in the plan's length and opens with the chat a verifiers rollout opens with."""
    pytest.importorskip("verifiers")
    from pddlworlds.frameworks.verifiers_env import opening_messages

    splits = [s for s in get_domain(world).splits() if not held_out(s) and optimal_lengths(world, s)]
    if not splits:
        pytest.skip(f"{world} has no stored plan yet")
    lengths = optimal_lengths(world, splits[0])
    problem = min(lengths, key=lambda p: (lengths[p], p))
    options = EpisodeOptions(domain=world, split=splits[0], problem=problem)
    rows = expert_rows(options)
    assert rows is not None and len(rows) == len(stored_plan(world, problem)) == lengths[problem]
    assert rows[-1]["progress_after"] == 1.0
    assert rows[0]["prompt"] == opening_messages(options)


@pytest.mark.slow
def test_a_trl_sft_step_trains_on_the_export_with_the_loss_on_the_expert_reply(
    tmp_path: Path, tiny_base_model: str, monkeypatch
) -> None:
    pytest.importorskip("trl")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from trl import SFTConfig, SFTTrainer

    from pddlworlds.training.trainer import load_base_model
    from pddlworlds.training.trl_grpo import tool_tokenizer

    export_cli(tmp_path / "expert.parquet")
    from datasets import load_dataset

    rows = load_dataset("parquet", data_files=str(tmp_path / "expert.parquet"), split="train",
                        cache_dir=str(tmp_path / "cache")).select([0])
    model, tokenizer, _ = load_base_model(tiny_base_model)
    tool_tokenizer(tokenizer)  # the GGUF has no chat template: Gemma's turns
    args = SFTConfig(output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=1, learning_rate=1e-3,
                     report_to=[], save_strategy="no", use_cpu=True, bf16=False, logging_steps=1, disable_tqdm=True,
                     max_length=None, seed=0, gradient_checkpointing=False)
    trainer = SFTTrainer(model=model, args=args, train_dataset=rows, processing_class=tokenizer)
    tokens = trainer.train_dataset[0]
    trained = [t for t, label in zip(tokens["input_ids"], tokens["labels"], strict=True) if label != -100]
    assert tokenizer.decode(trained) == f"Action: {rows[0]['action']}<end_of_turn>\n"
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    result = trainer.train()
    assert result.global_step == 1 and math.isfinite(result.training_loss) and result.training_loss > 0
    assert any(not p.detach().equal(before[n]) for n, p in model.named_parameters() if n in before)
