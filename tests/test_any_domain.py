"""A folder of domains of your own (laid out as `pddl_domains/`) wherever shipped domain names are used.

The folder is written here: an ADL briefcase domain (equality, a `forall` of conditional effects, a
quantified goal) without a `text.toml`, one split of two problems. It is played by `PDDLTextEnv`,
`pddlworlds eval --domains-root` (the expert solves both; the report renders, a resume finds the run's
folder again, the viewer replays it), the env-server started with `--domains-root` (names only, checked
against the listed folders; without the flag the folder is not served), the Inspect task (Inspect's real
`eval`, `mockllm` as the model the expert never calls) and the TRL environment (in process and remote).
A root's domain named like a shipped one gets none of the shipped domain's stored plans or proofs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pddlworlds.env import PDDLTextEnv
from pddlworlds.frameworks.episodes import EpisodeOptions
from pddlworlds.frameworks.trl_env import PDDLWorldsToolEnv
from pddlworlds.worlds.catalogue import get_domain

BRIEFCASE = """(define (domain briefcase)
  (:requirements :adl)
  (:types portable location)
  (:predicates (at ?y - portable ?x - location) (in ?x - portable) (is-at ?x - location))
  (:action move
    :parameters (?m ?l - location)
    :precondition (and (is-at ?m) (not (= ?m ?l)))
    :effect (and (is-at ?l) (not (is-at ?m))
                 (forall (?x - portable) (when (in ?x) (and (at ?x ?l) (not (at ?x ?m)))))))
  (:action take-out
    :parameters (?x - portable)
    :precondition (in ?x)
    :effect (not (in ?x)))
  (:action put-in
    :parameters (?x - portable ?l - location)
    :precondition (and (not (in ?x)) (at ?x ?l) (is-at ?l))
    :effect (in ?x)))
"""
P1 = """(define (problem p1) (:domain briefcase)
  (:objects home office - location paper - portable)
  (:init (is-at home) (at paper home))
  (:goal (and (at paper office) (not (in paper)))))
"""
P2 = """(define (problem p2) (:domain briefcase)
  (:objects home office park - location paper book - portable)
  (:init (is-at home) (at paper home) (at book office))
  (:goal (and (at paper office) (at book park) (forall (?x - portable) (not (in ?x))))))
"""
#: p1 solved, in the words the environment reads without a text.toml.
P1_PLAN = ["put-in paper home", "move home office", "take-out paper"]
SPLIT = "train"
#: A shipped problem a stored proof says is unsolvable (tests/frameworks/test_frameworks_parity.py plays it).
SHIPPED_UNSOLVABLE = ("blocksworld", "agentboard-mixed", "problem2-missing-b1")


def write_domain(root: Path, name: str, split: str, problems: dict[str, str]) -> None:
    folder = root / name / "problems" / split
    folder.mkdir(parents=True)
    (root / name / "domain.pddl").write_text(BRIEFCASE)
    for problem, text in problems.items():
        (folder / f"{problem}.pddl").write_text(text)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("domains")
    write_domain(folder, "briefcase", SPLIT, {"p1": P1, "p2": P2})
    return folder


def test_env_plays_a_domain_of_a_root_and_names_never_become_paths(root: Path, tmp_path: Path) -> None:
    env = PDDLTextEnv(domain="briefcase", domains_root=root, split=SPLIT)
    assert env.problem_names == ["p1", "p2"] and not env.shipped
    _, info = env.reset(options={"problem": "p1"})
    assert (info["domain"], info["split"], info["optimal_length"], info["solvable"]) == ("briefcase", SPLIT, None, None)
    for action in P1_PLAN:
        _, _, terminated, _, info = env.step(action)
        assert info["action_valid"], info
    assert terminated and info["success"]
    (tmp_path / "outside").mkdir()
    write_domain(tmp_path / "outside", "secret", SPLIT, {"p1": P1})
    for name in ("../outside/secret", str(tmp_path / "outside" / "secret"), "secret", "nope"):
        with pytest.raises(ValueError, match=r"^unknown domain .* in .*; domains: briefcase$"):
            get_domain(name, root)
    with pytest.raises(ValueError, match="is not a folder"):
        get_domain("briefcase", tmp_path / "missing")


def test_play_takes_a_roots_domain_by_name_only(cli, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(P1_PLAN) + "\n"))
    code, out, err = cli(["play", "briefcase", "--domains-root", str(root), "--split", SPLIT, "--problem", "p1"])
    assert code == 0 and "Solved in 3 steps" in out, err
    code, _, err = cli(["play", "../briefcase", "--domains-root", str(root), "--split", SPLIT])
    assert code != 0 and err.strip().endswith(f"unknown domain '../briefcase' in '{root}'; domains: briefcase")


def test_a_roots_domain_named_like_a_shipped_one_gets_no_stored_plans_or_proofs(tmp_path: Path) -> None:
    domain, split, problem = SHIPPED_UNSOLVABLE
    shipped = PDDLTextEnv(domain=domain, split=split)
    assert shipped.reset(options={"problem": problem})[1]["solvable"] is False  # the stored proof
    write_domain(tmp_path, domain, split, {problem: P1})  # a solvable briefcase problem of that name
    env = PDDLTextEnv(domain=domain, domains_root=tmp_path, split=split)
    _, info = env.reset(options={"problem": problem})
    assert info["solvable"] is None and info["optimal_length"] is None
    assert not EpisodeOptions.within(tmp_path, {"split": split}).offers_impossible
    assert EpisodeOptions(domain=domain, split=split).offers_impossible


def test_eval_plays_a_root_end_to_end_and_its_run_finds_the_folder_again(cli, root: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--agents", "expert,random", "--domains-root", str(root), "--domains", "briefcase", "--split",
            SPLIT, "--limit", "2", "--max-steps", "20", "--out", str(out), "--no-progress"]
    code, _, err = cli(argv)
    assert code == 0, err
    config = json.loads((out / "config.json").read_text())
    assert config["domains_root"] == str(root.resolve()) and config["problems"] == {"briefcase": ["p1", "p2"]}
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    expert = {line["problem"]: line for line in lines if line["agent"] == "expert"}
    assert sorted(expert) == ["p1", "p2"] and all(line["success"] for line in expert.values())
    # The optima of a root's problems are planned at the run's start (fd-opt) and kept in the run folder.
    assert {line["problem"]: line["optimal_length"] for line in lines} == {"p1": 3, "p2": 6}
    assert all(line["optimal_length"] == line["steps"] for line in expert.values())
    baselines = (out / "optimal_plans.csv").read_text()
    assert "briefcase,train,p1,3,3,false,true,solved_optimally,fd-opt" in baselines
    report = (out / "report.md").read_text()
    assert "| Briefcase | expert (planner) | 2/2 | 2 | 1.00 | 0.0 |" in report  # solved, at the optimum
    code, _, err = cli(["report", str(out), "--no-plots"])
    assert code == 0, err
    code, _, err = cli(argv)  # a resume: the same folder, nothing left to play
    assert code == 0 and "(0 new)" in err, err
    code, _, err = cli([*argv[:3], *argv[5:]])  # the run without its folder: the domain is not a shipped one
    assert code == 2 and "unknown domain(s) 'briefcase'" in err

    from pddlworlds.viewer import page_data, read_run

    _, details = page_data([read_run(out)])
    steps = [step for detail in details for step in detail["steps"]]
    assert steps and all(step["replayed"] for step in steps)  # the viewer replayed them in the run's folder


def test_env_server_serves_its_folder_by_name_only(root: Path, env_server: str) -> None:
    from pddlworlds.frameworks.openenv_client import RemoteEpisode
    from pddlworlds.testing.servers import free_port, pddlworlds_command, started

    shipped_only = RemoteEpisode(env_server)
    try:
        with pytest.raises(RuntimeError, match="unknown domain 'briefcase'"):
            shipped_only.reset({"domain": "briefcase", "split": SPLIT})
    finally:
        shipped_only.close()
    port = free_port()
    command = pddlworlds_command("env-server", "--port", str(port), "--domains-root", str(root))
    with started(command, f"http://127.0.0.1:{port}/health"):
        url = f"http://127.0.0.1:{port}"
        episode = RemoteEpisode(url)
        try:
            turn = episode.reset({"problem": "p1"})  # the folder's first domain and its split by default
            assert (turn.info["domain"], turn.info["split"]) == ("briefcase", SPLIT)
            for bad, why in ((f"{root}/briefcase", "unknown domain"), ("../briefcase", "unknown domain"),
                             ("gripper", "unknown domain 'gripper'")):
                with pytest.raises(RuntimeError, match=why) as caught:
                    episode.reset({"domain": bad})
                assert "\n" not in str(caught.value)
            with pytest.raises(RuntimeError, match="unknown reset option 'domains_root'"):
                episode.reset({"domains_root": "/", "domain": "briefcase"})
        finally:
            episode.close()
        remote = PDDLWorldsToolEnv(base_url=url, domain="briefcase", problem="p1")
        try:
            remote.reset()
            for action in P1_PLAN:
                remote.act(action)
            assert remote.get_reward() == 1.0 and remote.info["success"]
        finally:
            remote._episode.close()


def test_trl_env_plays_a_root_in_process(root: Path) -> None:
    env = PDDLWorldsToolEnv(domains_root=root, domain="briefcase")
    prompt = env.reset(problem="p1")
    assert "paper is at office" in prompt
    for action in P1_PLAN:
        env.act(action)
    assert env.get_reward() == 1.0 and env.info["split"] == SPLIT
    env.reset(problem="p2")  # a dataset row names the problem; the root and split stay
    assert env.info["problem"] == "p2" and env.get_reward() == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="domains_root is for episodes played in process"):
        PDDLWorldsToolEnv(base_url="http://127.0.0.1:9", domains_root=root)


def test_inspect_task_plays_a_root(root: Path, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the Inspect task needs the inspect extra (scripts/setup.sh installs it)")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import get_model

    from pddlworlds.frameworks import inspect_task

    task = inspect_task.pddlworlds(domains_root=str(root), domain="briefcase", agent="expert", max_steps=20)
    [log] = inspect_eval(task, model=get_model("mockllm/model"), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    samples = read_eval_log(log.location).samples
    episodes = {s.metadata["problem"]: s.scores["episode_scores"].metadata["episode"] for s in samples}
    assert sorted(episodes) == ["p1", "p2"] and all(e["success"] and e["split"] == SPLIT for e in episodes.values())
