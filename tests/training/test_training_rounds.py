"""Training rounds: adapters read back for warm starts, the held-out problems, the expert from any state,
on-policy labelling, and a tiny on-policy round end to end."""

from __future__ import annotations

import json
import random
import shutil
import warnings
from pathlib import Path

import pytest

from pddlworlds.agents import prompts
from pddlworlds.llm import Completion, shipped_adapter_path
from pddlworlds.registration import make_env
from pddlworlds.training.expert import StateExpert
from pddlworlds.training.onpolicy import play_labelled
from pddlworlds.training.problems import (
    HELD_OUT,
    HELD_OUT_SETS,
    TrainingProblem,
    draw_held_out,
    exclude_shipped,
    generate_training_problems,
    held_out_problems,
    same_up_to_renaming,
    structure_hash,
)
from pddlworlds.training.validation import compare, count_returns, episode_level, summarize
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.search import shortest_plan

gguf = pytest.importorskip("gguf")
safetensors_numpy = pytest.importorskip("safetensors.numpy")


def _write_peft(folder: Path, weights) -> Path:
    """A PEFT adapter folder holding `weights` (an `AdapterWeights`)."""
    folder.mkdir(parents=True, exist_ok=True)
    safetensors_numpy.save_file(weights.tensors, folder / "adapter_model.safetensors")
    config = {"r": weights.rank, "lora_alpha": weights.alpha, "peft_type": "LORA"}
    (folder / "adapter_config.json").write_text(json.dumps(config))
    return folder


def test_gguf_adapter_reads_back_as_written(tmp_path):
    """The shipped adapter: GGUF -> PEFT tensors -> GGUF gives the same tensors (f16 both ways)."""
    from pddlworlds.training.gguf_adapter import export_adapter, read_adapter

    shipped = read_adapter(shipped_adapter_path())
    assert (shipped.rank, shipped.alpha) == (16, 32.0)
    assert len(shipped.tensors) == 18 * 7 * 2  # 18 layers, 7 modules, A and B
    a = shipped.tensors["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"]
    b = shipped.tensors["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"]
    assert a.shape == (16, 640) and b.shape[1] == 16 and a.dtype.name == "float32" and abs(a).sum() > 0
    folder = _write_peft(tmp_path / "peft", shipped)
    from_folder = read_adapter(folder)
    again = read_adapter(export_adapter(folder, tmp_path / "again.gguf"))
    for weights in (from_folder, again):
        assert weights.tensors.keys() == shipped.tensors.keys() and weights.alpha == shipped.alpha
        for name, array in shipped.tensors.items():
            assert (weights.tensors[name] == array).all(), name


def test_reading_a_bad_adapter_says_what_is_wrong(tmp_path):
    from pddlworlds.training.gguf_adapter import read_adapter

    with pytest.raises(FileNotFoundError, match="adapter not found"):
        read_adapter(tmp_path / "missing.gguf")
    with pytest.raises(FileNotFoundError, match="adapter_config.json is missing"):
        read_adapter(tmp_path)
    base = domains()["blocksworld"].domain_file  # not a GGUF file at all
    with pytest.raises(ValueError):
        read_adapter(base)


def test_held_out_problems_are_pinned_and_never_trained_on(tmp_path):
    for domain in HELD_OUT:
        drawn = draw_held_out(tmp_path / "drawn", domain)
        assert tuple((p.level, p.seed) for p in drawn) == HELD_OUT[domain], domain
        assert len(drawn) == 6
    problems = held_out_problems(tmp_path / "pinned")
    assert len(problems) == 6 * len(HELD_OUT)


@pytest.mark.parametrize(("set_name", "which"), [("standard", 0), ("wide", -1), ("public-like", 0)])
def test_a_training_draw_equal_to_a_held_out_problem_is_dropped_as_such(tmp_path, set_name, which):
    spec = HELD_OUT_SETS.get(set_name)
    domain = list(spec.problems)[which]
    p = held_out_problems(tmp_path / "pinned", [domain], set_name)[which]
    copy = tmp_path / "train" / p.domain / "s1001-copy.pddl"
    copy.parent.mkdir(parents=True)
    shutil.copy(p.path, copy)
    kept, dropped = exclude_shipped([TrainingProblem(p.domain, p.level, 1, 1001, "s1001-copy", copy, {})])
    # a set shipped as a split is known by its files, once
    where = f"{spec.split}/{p.name}" if spec.split else f"held-out/{p.name}"
    assert not kept and dropped == {f"{p.domain}/s1001-copy": f"{p.domain}/{where}"}


@pytest.mark.slow
@pytest.mark.proof  # parses every training problem of the seeds used (about 500): minutes
def test_the_wide_held_out_set_redraws_as_pinned(tmp_path):
    wide = HELD_OUT_SETS.get("wide")
    for domain, pinned in wide.problems.items():
        drawn = draw_held_out(tmp_path / "drawn", domain, "wide")
        assert tuple((p.level, p.seed) for p in drawn) == pinned, domain
        assert {p.level for p in drawn} == {"medium", "hard"}


@pytest.mark.slow
def test_the_wide_held_out_set_is_at_the_public_sizes_and_never_trained_on(tmp_path):
    problems = held_out_problems(tmp_path / "pinned", set_name="wide")
    assert len(problems) == 48 and all(p.name.startswith("w") for p in problems)
    # none equals a standard held-out problem or a problem of training seeds used (checked here for some)
    train = generate_training_problems(tmp_path / "train", seeds=(1001, 1010, 1020, 2001, 2009), per_level=2,
                                       levels=("medium", "hard"))
    standard = held_out_problems(tmp_path / "standard")
    index: dict[tuple[str, str], list] = {}
    for q in [*standard, *train]:
        task = _task(q)
        index.setdefault((q.domain, structure_hash(task)), []).append((q.name, task))
    for p in problems:
        task = _task(p)
        for name, other in index.get((p.domain, structure_hash(task)), []):
            assert not same_up_to_renaming(task, other), (p.name, name)


def _task(p):
    from pddlworlds.worlds.catalogue import domains, load_task

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_task(domains()[p.domain].domain_file, p.path)


def test_count_returns():
    assert count_returns([1, 2, 3]) == 0
    assert count_returns([1, 2, 1, 2, 2, 3, 1]) == 3  # back to 1, to 2, (stays at 2), to 3, back to 1
    assert count_returns([]) == 0
    rows = [{"agent": "standard", "domain": "d", "success": True, "progress": 1.0, "steps": 4, "valid_steps": 3,
             "loops": 1, "seconds": 2.0},
            {"agent": "standard", "domain": "d", "success": False, "progress": 0.5, "steps": 6, "valid_steps": 3,
             "loops": 0, "seconds": 3.0}]
    figures = summarize(rows)
    assert figures["standard/all"] == figures["standard/d"] == {
        "episodes": 2, "sr": 50.0, "pr": 75.0, "executability": 60.0, "loops_per_episode": 0.5, "seconds_per_step": 0.5}
    assert set(figures) == {"standard/all", "standard/d"}  # no level is known for these rows


def test_held_out_figures_by_level_from_the_field_or_the_problem_name():
    def row(problem, success, **extra):
        return {"agent": "hiagent", "domain": "gripper", "problem": problem, "success": success,
                "progress": float(success), "steps": 10, "valid_steps": 5, "loops": 0, "seconds": 1.0, **extra}

    rows = [row("h9002-easy-01", True), row("h9003-easy-01", True), row("h9002-hard-01", False),
            row("renamed", False, level="medium")]
    assert [episode_level(r) for r in rows] == ["easy", "easy", "hard", "medium"]
    assert episode_level({"problem": "p01"}) is None
    figures = summarize(rows)
    assert (figures["hiagent/level:easy"]["sr"], figures["hiagent/level:hard"]["sr"]) == (100.0, 0.0)
    assert figures["hiagent/level:medium"]["episodes"] == 1 and figures["hiagent/all"]["sr"] == 50.0
    assert compare(rows, rows)["hiagent/level:easy"]["pairs"] == 2


def test_compare_pairs_episodes_by_problem_and_tests_the_differences():
    def row(agent, domain, problem, success, progress):
        return {"agent": agent, "domain": domain, "problem": problem, "success": success, "progress": progress}

    a = [row("hiagent", "d", f"p{i}", i < 7, 1.0 if i < 7 else 0.25) for i in range(8)]
    b = [row("hiagent", "d", f"p{i}", i == 0, 1.0 if i == 0 else 0.5) for i in range(8)]
    b.append(row("hiagent", "d", "unpaired", True, 1.0))
    c = compare(a, b)
    assert set(c) == {"hiagent/d", "hiagent/all", "all/all"}
    d = c["hiagent/d"]
    assert (d["pairs"], d["sr_a"], d["sr_b"], d["solved_only_a"], d["solved_only_b"]) == (8, 87.5, 12.5, 6, 0)
    assert d["sr_p"] == round(2 * 0.5 ** 6, 3)  # McNemar's exact test: 6 discordant pairs, all one way
    assert d["pr_differing"] == 7 and d["pr_p"] is not None and d["pr_p"] < 0.05
    # one problem of difference on a handful is no evidence: the p-value says so
    one = compare(a[:2], [row("hiagent", "d", "p0", True, 1.0), row("hiagent", "d", "p1", False, 0.25)])
    assert one["all/all"]["sr_p"] == 1.0
    same = compare(a, a)["all/all"]
    assert same["sr_p"] is None and same["pr_p"] is None and same["pr_differing"] == 0
    with pytest.raises(ValueError, match="no .agent, domain, problem. in common"):
        compare(a, [row("standard", "d", "p0", True, 1.0)])


def _problem(tmp_path, domain="blocksworld", level="hard"):
    return next(p for p in generate_training_problems(tmp_path, seeds=[1003], per_level=1, domain_names=[domain])
                if p.level == level)


def _expert(env, problem):
    d = domains()[problem.domain]
    return StateExpert(env.unwrapped.world, Path(d.domain_file), problem.path, Path(d.text_file))


def test_expert_plans_optimally_from_any_state(tmp_path):
    problem = _problem(tmp_path)
    d = domains()[problem.domain]
    env = make_env(d.domain_file, problem.path, text_file=d.text_file)
    expert = _expert(env, problem)
    world = env.unwrapped.world
    task = world.task
    first = expert.plan_from(world.initial_state)
    assert len(first) == len(shortest_plan(task))
    # off the expert's path: a valid action that is not its first
    wrong = next(a for a in task.applicable(world.initial_state) if a != first[0])
    state = task.apply(world.initial_state, wrong)
    plan = expert.plan_from(state)
    s = state
    for a in plan:
        assert task.is_applicable(s, a)
        s = task.apply(s, a)
    assert task.is_goal(s) and len(plan) <= len(first) + 1
    # the states along a found plan are answered from the cache with its suffixes
    assert expert.plan_from(task.apply(state, plan[0])) == plan[1:]
    assert expert.how == {"bfs": 2}


class WanderingModel:
    """Writes a random valid action (seeded) in the agent's format; HiAgent gets a new subgoal every third
    call, so subgoals finish and are summarised."""

    model_id = "wandering"
    in_context_example = False

    def __init__(self, env, hiagent: bool):
        self.env, self.hiagent, self.rng, self.n = env, hiagent, random.Random(0), 0

    def count_tokens(self, text):
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0):
        if tuple(stop) != tuple(prompts.ACTION_STOP):
            return Completion("Met: yes\nSummary: something happened.", 1, 1, 0.0)
        world = self.env.unwrapped.world
        action = self.rng.choice(world.valid_actions(self.env.unwrapped.state))
        self.n += 1
        if not self.hiagent:
            return Completion(f" {action}", 1, 1, 0.0)
        prefix = f"Subgoal: wander number {self.n}\n" if self.n % 3 == 1 else ""
        return Completion(f"{prefix}Action: {action}", 1, 1, 0.0)


@pytest.mark.parametrize("agent_name", ["standard", "hiagent"])
def test_on_policy_calls_carry_the_experts_reply_from_the_agents_state(tmp_path, agent_name):
    from pddlworlds.agents.parsing import parse_reply

    problem = _problem(tmp_path)
    d = domains()[problem.domain]
    env = make_env(d.domain_file, problem.path, text_file=d.text_file, max_episode_steps=8)
    expert = _expert(env, problem)
    model = WanderingModel(env, agent_name == "hiagent")
    record, calls = play_labelled(env, model, agent_name, expert)
    world = env.unwrapped.world
    actions = [c for c in calls if c.purpose == "action"]
    assert len(actions) == record.steps == 8 and all(c.label == "expert" for c in calls)
    for c in actions:
        outcome = world.step(c.state, parse_reply(c.reply).action, "full")
        assert outcome.valid  # the expert's action from where the agent stands, one step closer
        assert len(expert.plan_from(outcome.state)) == len(expert.plan_from(c.state)) - 1
    # the agent's own (wandering) actions stay in the later prompts (HiAgent's last subgoal started at call 7)
    own = parse_reply(actions[-2].model_reply).action
    assert own in actions[-1].messages[-1].content
    if agent_name == "standard":
        assert all(c.reply.startswith(" ") for c in actions)
    else:
        assert actions[0].reply.startswith("Subgoal: ")
        summaries = [c for c in calls if c.purpose == "summary"]
        assert summaries and all(c.reply.startswith(("Met: yes\nSummary: ", "Met: no\nSummary: ")) for c in summaries)
        # the agent's subgoals are not the expert's: the label names the expert's after each change
        assert sum(c.reply.startswith("Subgoal: ") for c in actions) >= 2


class StubbornModel:
    """Writes the same unknown action whatever the state: cheap episodes for the round's bookkeeping."""

    model_id = "stubborn"
    in_context_example = False

    def count_tokens(self, text):
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0):
        if tuple(stop) != tuple(prompts.ACTION_STOP):
            return Completion("Met: no\nSummary: nothing.", 1, 1, 0.0)
        hiagent = "Subgoal" in messages[0].content
        return Completion("Subgoal: wait\nAction: wait a while" if hiagent else " wait a while", 1, 1, 0.0)


def test_an_interrupted_round_is_data_as_it_stands_and_resumes(tmp_path):
    """A round stopped after its first episode has a manifest marked incomplete; the same call resumes it,
    keeping the first episode's calls and playing only the rest; other settings and a finished round are
    refused, naming why."""
    import threading

    from pddlworlds.training.dataset import training_rows
    from pddlworlds.training.rounds import rollout_dataset

    out = tmp_path / "round1"
    settings = {"adapter": None, "round_name": "round1", "seeds": [2001], "domain_names": ["blocksworld"],
                    "levels": ["medium"], "max_steps": 2, "max_problems": 2, "progress": False, "family": "public-like"}
    stop = threading.Event()
    first = rollout_dataset(out, StubbornModel(), stop=stop, on_episode=lambda e: stop.set(), **settings)
    assert first["complete"] is False and first["episodes"] == 1 and first["calls"] >= 2
    assert first["generator"]["family"] == "public-like" and "(define (problem BW-rand-5)" in next(
        (out / "problems").rglob("*.pddl")).read_text()
    with pytest.raises(ValueError, match=r"other settings \(generator\)"):  # another family is another round
        rollout_dataset(out, StubbornModel(), **{**settings, "family": "standard"})
    kept = (out / "calls.jsonl").read_text().splitlines()
    assert len(training_rows(str(out))) == first["calls"]  # usable as training data as it stands
    with pytest.raises(ValueError, match=r"other settings \(max_steps\)"):
        rollout_dataset(out, StubbornModel(), **{**settings, "max_steps": 3})
    done = rollout_dataset(out, StubbornModel(), **settings)
    assert done["complete"] is True and done["episodes"] == 2 * done["problems"] >= 2
    assert (out / "calls.jsonl").read_text().splitlines()[: len(kept)] == kept
    assert len({json.loads(line)["episode"] for line in (out / "rollout_episodes.jsonl").read_text().splitlines()}) == done["episodes"]
    with pytest.raises(ValueError, match="holds a finished round"):
        rollout_dataset(out, StubbornModel(), **settings)


# ---- with the model (transformers + the shipped GGUF; llama.cpp for the on-policy round) ------------------

def _tiny_data(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"episode": f"e{i}", "agent": "standard", "domain": "d", "problem": "p", "call": 0, "purpose": "action",
             "messages": [{"role": "system", "content": "Answer with the code."}, {"role": "user", "content": prompt}],
             "reply": reply, "stop": list(prompts.ACTION_STOP)}
            for i, (prompt, reply) in enumerate([("Code of the blue door.\nAction:", " open crate zulu"),
                                                 ("Code of the red door.\nAction:", " stack b7 on b2")])]
    (folder / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.embedded
@pytest.mark.slow
def test_warm_start_reproduces_the_adapter_it_starts_from(tmp_path, tiny_base_model):
    """A tiny fit's adapter, as GGUF or PEFT folder, is the start of a fit stopped before its first step
    (`max_minutes` tiny): its PEFT weights are the first's (rounded to f16 through the GGUF) and its GGUF
    holds the same tensors (on the tiny Gemma 3)."""
    pytest.importorskip("torch")
    from safetensors.numpy import load_file

    from pddlworlds.training.gguf_adapter import read_adapter
    from pddlworlds.training.trainer import TrainConfig, train

    data = _tiny_data(tmp_path / "data")
    base = {"data": str(data), "max_len": 128, "checkpoint_every": 100, "threads": 1, "base_model": tiny_base_model}
    first = train(TrainConfig(out=str(tmp_path / "a"), steps=3, lr=2e-3, warmup=1, **base), progress=False)
    peft_a = load_file(tmp_path / "a" / "adapter" / "adapter_model.safetensors")
    for init, exact in ((first["adapter_gguf"], False), (str(tmp_path / "a" / "adapter"), True)):
        out = tmp_path / ("from-gguf" if not exact else "from-peft")
        summary = train(TrainConfig(out=str(out), steps=1, max_minutes=1e-9, init=init, **base), progress=False)
        assert summary["init"]["path"] == init and summary["steps_done"] == 0
        peft_b = load_file(out / "adapter" / "adapter_model.safetensors")
        assert peft_b.keys() == peft_a.keys()
        for name, array in peft_a.items():
            want = array if exact else array.astype("float16").astype("float32")
            assert (peft_b[name] == want).all(), name
        a, b = read_adapter(first["adapter_gguf"]), read_adapter(summary["adapter_gguf"])
        assert all((b.tensors[n] == a.tensors[n]).all() for n in a.tensors)
    with pytest.raises(ValueError, match="rank 16, alpha 32; this run has --rank 8"):
        train(TrainConfig(out=str(tmp_path / "c"), steps=1, rank=8, init=first["adapter_gguf"], **base), progress=False)


@pytest.mark.embedded
@pytest.mark.slow
def test_tiny_on_policy_round_end_to_end(tmp_path, tiny_base_model):
    """The shipped adapter plays a few steps of a generated problem with both agents, the expert labels
    every call, and a one-step fit trains on the round together with other data (the tiny Gemma 3, which
    has the shipped tokenizer; the fit warm-started from the shipped adapter on the shipped model is
    `test_a_fit_of_the_shipped_model_warm_starts_from_the_shipped_adapter`)."""
    pytest.importorskip("torch")
    from pddlworlds.llm import EmbeddedLLM
    from pddlworlds.training.data import load_calls
    from pddlworlds.training.rounds import rollout_dataset
    from pddlworlds.training.trainer import TrainConfig, train

    adapter = str(shipped_adapter_path())
    model = EmbeddedLLM(lora_path=adapter, n_ctx=4096, n_threads=1)
    manifest = rollout_dataset(tmp_path / "round1", model, adapter=adapter, round_name="round1", seeds=[2001, 2002],
                               domain_names=["blocksworld"], levels=["medium"], max_steps=2, max_problems=1,
                               progress=False)
    rows = load_calls(tmp_path / "round1")
    assert manifest["episodes"] == 2 and manifest["calls"] == len(rows) >= 4
    assert manifest["adapter"]["sha256"] and manifest["problem_names"][0].startswith("blocksworld/s200")
    assert {r["agent"] for r in rows} == {"standard", "hiagent"} and all(r["label"] == "expert" for r in rows)
    data = f"{_tiny_data(tmp_path / 'other')},{tmp_path / 'round1'}"
    summary = train(TrainConfig(data=data, out=str(tmp_path / "fit"), steps=1, max_len=2048, threads=1,
                                checkpoint_every=100, base_model=tiny_base_model), progress=False)
    assert summary["steps_done"] == 1 and summary["data"]["calls"] == len(rows) + 2
    assert summary["data"]["manifests"][str(tmp_path / "round1")]["round"] == "round1"
    assert summary["data"]["by_domain"]["blocksworld"]["skipped_too_long"] == 0


@pytest.mark.heavy  # the shipped model's float copy: transformers reads its GGUF twice with gguf's reader
@pytest.mark.embedded
@pytest.mark.slow
def test_a_fit_of_the_shipped_model_warm_starts_from_the_shipped_adapter(tmp_path):
    """A one-step fit of the shipped model, warm-started from the shipped adapter (what an on-policy round's
    fit does): every LoRA tensor of the model comes from the adapter, and the step trains."""
    pytest.importorskip("torch")
    from pddlworlds.files import file_sha256
    from pddlworlds.training.trainer import TrainConfig, train

    adapter = str(shipped_adapter_path())
    summary = train(TrainConfig(data=str(_tiny_data(tmp_path / "data")), out=str(tmp_path / "fit"), steps=1,
                                max_len=2048, init=adapter, threads=1, checkpoint_every=100), progress=False)
    assert summary["steps_done"] == 1 and summary["data"]["calls"] == 2
    assert summary["init"] == {"path": adapter, "sha256": file_sha256(adapter), "tensors": str(18 * 7 * 2)}


@pytest.mark.embedded
@pytest.mark.slow
def test_sigterm_ends_a_fit_after_its_step_with_checkpoint_and_adapter(tmp_path, tiny_base_model):
    """A background fit that is sent SIGTERM finishes the step under way and ends as --max-minutes ends it:
    a checkpoint of the steps done, an adapter and a summary saying it stopped early (on the tiny Gemma 3,
    its float copy in the session's model cache, which the process inherits)."""
    pytest.importorskip("torch")
    import signal
    import subprocess
    import sys
    import time

    data = _tiny_data(tmp_path / "data")
    out = tmp_path / "fit"
    cmd = [sys.executable, "-m", "pddlworlds.cli", "train", "fit", "--data", str(data), "--out", str(out),
           "--max-len", "128", "--steps", "100000", "--threads", "1", "--checkpoint-every", "1000", "--no-progress",
           "--base-model", tiny_base_model]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while not ((out / "log.jsonl").is_file() and (out / "log.jsonl").read_text().count("\n") >= 2):
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "no training step logged in 10 minutes"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr[-2000:]
    assert "SIGTERM: stopping after the current step" in stderr
    summary = json.loads((out / "summary.json").read_text())
    logged = (out / "log.jsonl").read_text().count("\n")
    assert summary["stopped_early"] and 2 <= summary["steps_done"] == logged < 100000
    assert json.loads(stdout.strip().splitlines()[-1])["steps_done"] == summary["steps_done"]
    assert (out / "adapter.gguf").is_file() and summary["adapter_gguf_sha256"]
    import torch

    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == summary["steps_done"]


@pytest.mark.embedded
@pytest.mark.slow
def test_train_layers_trains_only_the_top_layers_and_old_checkpoints_resume(tmp_path, tiny_base_model):
    """`train_layers=2` warm-started from an adapter changes only the top two layers' LoRA tensors (the
    rest stay the start's, bit for bit); a checkpoint written before the option existed (no key in its
    configuration) resumes as one made with the default, and another value is refused (on the tiny Gemma 3,
    6 layers)."""
    pytest.importorskip("torch")
    import re

    import torch
    from safetensors.numpy import load_file

    from pddlworlds.training.trainer import TrainConfig, train

    data = _tiny_data(tmp_path / "data")
    base = {"data": str(data), "max_len": 128, "checkpoint_every": 1, "threads": 1, "warmup": 1, "lr": 2e-3,
                "base_model": tiny_base_model}
    train(TrainConfig(out=str(tmp_path / "a"), steps=2, **base), progress=False)
    start = load_file(tmp_path / "a" / "adapter" / "adapter_model.safetensors")
    summary = train(TrainConfig(out=str(tmp_path / "b"), steps=2, init=str(tmp_path / "a" / "adapter"),
                                train_layers=2, **base), progress=False)
    after = load_file(tmp_path / "b" / "adapter" / "adapter_model.safetensors")
    layers = {int(re.search(r"\.layers\.(\d+)\.", n).group(1)) for n in start}
    top = sorted(layers)[-2:]
    changed = {int(re.search(r"\.layers\.(\d+)\.", n).group(1)) for n in start if not (after[n] == start[n]).all()}
    assert changed == set(top)
    assert summary["trainable_parameters"] * len(layers) == 2 * sum(a.size for a in start.values())
    with pytest.raises(ValueError, match="--train-layers 99: the model has"):
        train(TrainConfig(out=str(tmp_path / "c"), steps=1, train_layers=99, **base), progress=False)
    assert not (tmp_path / "c").exists()
    # a checkpoint from before the option: drop the key, resume with the default, refuse another value
    checkpoint = tmp_path / "a" / "checkpoint.pt"
    state = torch.load(checkpoint, weights_only=False)
    del state["config"]["train_layers"]
    torch.save(state, checkpoint)
    assert train(TrainConfig(out=str(tmp_path / "a"), steps=3, **base), progress=False)["steps_done"] == 3
    with pytest.raises(ValueError, match="another configuration \\(train_layers\\)"):
        train(TrainConfig(out=str(tmp_path / "a"), steps=4, train_layers=1, **base), progress=False)


def test_validate_script_compares_two_adapters_without_playing(tmp_path):
    """`scripts/validate_adapter.py --report-only --compare` pairs stored episodes and keeps the adapter that
    played them (not --lora's default)."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]

    def write(name, solved, adapter):
        rows = [{"agent": "hiagent", "domain": "blocksworld", "problem": f"h{seed}-{level}-01", "success": i < solved,
                 "progress": 1.0 if i < solved else 0.5, "steps": 10, "valid_steps": 5, "loops": 0, "seconds": 1.0}
                for i, (level, seed) in enumerate(HELD_OUT["blocksworld"])]
        (tmp_path / f"{name}.json.episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (tmp_path / f"{name}.json").write_text(json.dumps({"adapter": adapter, "adapter_sha256": "ab" * 32,
                                                            "workers": 3, "wall_seconds_this_run": 1234.5}))

    write("new", 4, "/cands/new.gguf")
    write("old", 3, "/cands/old.gguf")
    run = subprocess.run([sys.executable, str(repo / "scripts" / "validate_adapter.py"), "--out", str(tmp_path / "new.json"),
                          "--report-only", "--agents", "hiagent", "--domains", "blocksworld",
                          "--compare", str(tmp_path / "old.json")], capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert "| hiagent/blocksworld | 6 | 66.7 | 50.0 | 1 | 0 | 1.0 |" in run.stdout
    result = json.loads((tmp_path / "new.json").read_text())
    assert result["adapter"] == "/cands/new.gguf"
    assert result["workers"] == 3 and result["wall_seconds_this_run"] == 1234.5  # how they were played, kept
    assert result["compared_with"]["figures"]["all/all"]["solved_only_a"] == 1
    missing = subprocess.run([sys.executable, str(repo / "scripts" / "validate_adapter.py"), "--out", str(tmp_path / "new.json"),
                              "--report-only", "--compare", str(tmp_path / "absent.json")], capture_output=True, text=True,
                             check=False)
    assert missing.returncode == 2 and "absent.json.run nor" in missing.stderr and "absent.json.episodes.jsonl" in missing.stderr
