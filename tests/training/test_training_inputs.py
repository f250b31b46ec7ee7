"""`pddlworlds train`: every bad input is refused up front with one line and exit 2, nothing is written,
and the training schedule cannot loop without progress."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from pddlworlds.cli import main
from pddlworlds.training.data import TrainingDataError, load_calls
from pddlworlds.training.trainer import TrainConfig, build_sequences, check_config

CALL = {
    "episode": "e0", "agent": "standard", "domain": "d", "problem": "p", "call": 0, "purpose": "action",
    "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Action:"}],
    "reply": " go", "stop": ["\n"],
}


def _data(folder: Path, *lines: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "calls.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder


def _fit(capsys, data: Path, out: Path, *extra: str) -> tuple[int, str]:
    code = main(["train", "fit", "--data", str(data), "--out", str(out), "--no-progress", *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (None, "no such dataset folder"),
        ((), "no calls in the file"),
        (("{}",), "calls.jsonl, line 1: not a recorded call: no agent, domain, messages, reply"),
        ((json.dumps(CALL), json.dumps({**CALL, "messages": "hello"})), "line 2: not a recorded call: messages is not"),
        ((json.dumps({**CALL, "messages": [{"role": "user"}]}),), "line 1: not a recorded call: messages[0]"),
        (("[1, 2]",), "line 1: not a recorded call: expected a JSON object, found list"),
        (("{not json",), "line 1: not a JSON line"),
    ],
)
def test_bad_training_data_is_one_line_and_nothing_written(tmp_path, capsys, lines, expected):
    data = tmp_path / "data"
    if lines is not None:
        _data(data, *lines)
    code, err = _fit(capsys, data, tmp_path / "out")
    assert code == 2
    assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_data_folder_without_calls_file_is_named(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    code, err = _fit(capsys, tmp_path / "data", tmp_path / "out")
    assert code == 2 and "calls.jsonl: no such file" in err


@pytest.mark.parametrize(
    "option",
    [
        ("--accumulate", "0"), ("--steps", "0"), ("--steps", "-3"), ("--lr", "0"), ("--lr", "5"),
        ("--lr", "nan"), ("--max-len", "0"), ("--epochs", "0"), ("--warmup", "-1"), ("--rank", "0"),
        ("--checkpoint-every", "0"), ("--threads", "0"), ("--max-minutes", "-1"), ("--train-layers", "-1"),
        ("--train-layers", "2.5"),
    ],
)
def test_fit_numbers_out_of_range_are_refused_by_the_parser(tmp_path, capsys, option):
    data = _data(tmp_path / "data", json.dumps(CALL))
    with pytest.raises(SystemExit) as exit_info:
        _fit(capsys, data, tmp_path / "out", *option)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and option[0] in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "option",
    [("--per-level", "0"), ("--per-level", "-2"), ("--invalid", "1.5"), ("--check", "-0.1"),
     ("--planner-timeout", "0")],
)
def test_data_numbers_out_of_range_are_refused_by_the_parser(tmp_path, capsys, option):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "data", "--out", str(tmp_path / "out"), *option])
    assert exit_info.value.code == 2 and option[0] in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("change", "expected"),
    [({"accumulate": 0}, "--accumulate must be at least 1"), ({"lr": -1.0}, "--lr must be more than 0"),
     ({"steps": -1}, "--steps must be at least 0"), ({"max_len": 0}, "--max-len must be at least 1"),
     ({"train_layers": -2}, "--train-layers must be at least 0")],
)
def test_a_config_built_in_code_is_checked_like_the_options(change, expected):
    with pytest.raises(ValueError, match=expected):
        check_config(TrainConfig(data="d", out="o", **change))


class _CharTokenizer:
    bos_token_id = 1

    def __call__(self, text, add_special_tokens=False, split_special_tokens=False):  # a Hugging Face tokenizer's call
        return {"input_ids": [ord(c) for c in text]}


def test_max_len_shorter_than_every_call_is_an_error_not_an_endless_loop(tmp_path):
    data = _data(tmp_path / "data", json.dumps(CALL), json.dumps(CALL))
    config = TrainConfig(data=str(data), out=str(tmp_path / "out"), max_len=8)
    with pytest.raises(ValueError, match=r"every one of its 2 calls is longer than --max-len 8"):
        build_sequences(config, _CharTokenizer())


def test_the_schedule_refuses_to_loop_without_sequences():
    from pddlworlds.training import trainer

    outcome: list[object] = []

    def schedule() -> None:
        try:
            outcome.append(trainer._schedule(0, 3, seed=0))
        except ValueError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=schedule, daemon=True)  # it looped forever before the guard
    worker.start()
    worker.join(timeout=10)
    assert outcome and isinstance(outcome[0], ValueError)


def test_load_calls_error_is_a_value_error_naming_file_and_line(tmp_path):
    data = _data(tmp_path / "data", json.dumps(CALL), json.dumps({**CALL, "reply": 3}))
    with pytest.raises(TrainingDataError, match=r"calls.jsonl, line 2: .*reply is a int"):
        load_calls(data)


def test_export_of_a_missing_folder_is_one_line(tmp_path, capsys):
    out = tmp_path / "a.gguf"
    code = main(["train", "export", str(tmp_path / "nothing"), str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "nothing: no such folder" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "adapter_config.json").write_text("{}")
    code = main(["train", "export", str(tmp_path / "half"), str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "adapter_model.safetensors is missing" in err and not out.exists()


@pytest.mark.parametrize("command", ["data", "rollout"])
@pytest.mark.parametrize(
    ("option", "value", "unknown", "choices"),
    [
        ("--levels", "huge", "huge", "choose from easy, medium, hard"),
        ("--levels", "medium,huge", "huge", "choose from easy, medium, hard"),
        ("--levels", ",", None, "choose from easy, medium, hard"),
        ("--domains", "sokoban", "sokoban", "choose from all, blocksworld, gripper, tyreworld, barman"),
        ("--domains", "blocksworld,sokoban", "sokoban", "choose from all, blocksworld, gripper, tyreworld, barman"),
        ("--domains", ",", None, "choose from all, blocksworld, gripper, tyreworld, barman"),
    ],
)
def test_unknown_levels_and_domains_are_refused_by_the_parser(tmp_path, capsys, command, option, value, unknown, choices):
    extra = ["--adapter", "none"] if command == "rollout" else []
    with pytest.raises(SystemExit) as exit_info:
        main(["train", command, "--out", str(tmp_path / "out"), option, value, *extra])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and option in err and choices in err
    assert unknown is None or f"unknown {option[2:-1]}(s) {unknown}" in err
    assert not (tmp_path / "out").exists()


def test_levels_choose_the_generated_problems_and_are_recorded(tmp_path, capsys):
    out = tmp_path / "data"
    code = main(["train", "data", "--out", str(out), "--seeds", "1001", "--per-level", "1", "--domains",
                 "blocksworld,gripper", "--levels", "hard,medium", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["generator"]["levels"] == ["medium", "hard"]  # the generators' order, whatever the option's
    names = [p.stem for p in (out / "problems").rglob("*.pddl")]
    problems = sorted({json.loads(line)["problem"] for line in (out / "calls.jsonl").read_text().splitlines()})
    assert problems and all("-medium-" in p or "-hard-" in p for p in problems)
    assert any("-hard-" in p for p in problems) and not any("-easy-" in n for n in names)


def _episodes(folder: Path, n: int, calls_each: int = 2) -> Path:
    lines = [json.dumps({**CALL, "episode": f"e{e}", "call": c, "reply": f" go {e}"})
             for e in range(n) for c in range(calls_each)]
    return _data(folder, *lines)


def test_a_share_of_a_folder_is_a_seeded_sample_of_whole_episodes(tmp_path):
    from pddlworlds.training.dataset import load_training_data

    expert, fresh = _episodes(tmp_path / "expert", 20), _episodes(tmp_path / "round", 3)
    data = f"{fresh},{expert}:0.25"
    first = load_training_data(data, seed=0)
    assert first.sources[str(fresh)] == {"fraction": 1.0, "episodes": 3, "episodes_kept": 3, "calls_kept": 6,
                                         "dropped_as_shipped": {}}
    assert first.sources[str(expert)] == {"fraction": 0.25, "episodes": 20, "episodes_kept": 5, "calls_kept": 10,
                                          "dropped_as_shipped": {}}
    sampled = [r["episode"] for r in first.rows[6:]]
    assert len(set(sampled)) == 5 and all(sampled.count(e) == 2 for e in sampled)  # whole episodes
    assert [int(e[1:]) for e in dict.fromkeys(sampled)] == sorted(int(e[1:]) for e in set(sampled))  # file order
    assert load_training_data(data, seed=0).rows == first.rows  # the same seed, the same sample
    others = {tuple(r["episode"] for r in load_training_data(data, seed=s).rows) for s in range(1, 6)}
    assert len(others | {tuple(r["episode"] for r in first.rows)}) > 1  # the seed decides it
    assert len(load_training_data(f"{expert}:0.01").rows) == 2  # at least one episode


@pytest.mark.parametrize("share", ["0", "1.5", "-0.2", "nan"])
def test_a_share_out_of_range_is_refused_by_the_parser(tmp_path, capsys, share):
    data = _episodes(tmp_path / "data", 2)
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "fit", "--data", f"{data}:{share}", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"{data}:{share}" in err and "above 0 and at most 1" in err
    assert not (tmp_path / "out").exists()


def test_a_colon_in_a_folder_name_is_part_of_the_path(tmp_path):
    from pddlworlds.training.dataset import data_sources

    assert data_sources(f"{tmp_path}/a:b,{tmp_path}/c:1") == [
        data_sources(f"{tmp_path}/a:b")[0], data_sources(f"{tmp_path}/c")[0]]
    assert data_sources(f"{tmp_path}/a:b")[0].folder == tmp_path / "a:b"


def test_calls_on_a_shipped_or_held_out_problem_are_never_trained_on(tmp_path):
    """Data drawn before a split shipped (training seeds 3001+ drew four problems the `heldout` split later
    held): the fit drops their calls, names them in its account, and keeps the others."""
    from pddlworlds.training.dataset import load_training_data
    from pddlworlds.worlds.catalogue import domains

    shipped = domains()["blocksworld"].problem_file("pl9301-easy-01", "heldout")
    other = domains()["blocksworld"].problem_file("problem1", "agentboard")
    lines = []
    for name in ("s1-easy-01", "s2-easy-01", "s3-easy-01"):
        lines += [json.dumps({**CALL, "domain": "blocksworld", "problem": name, "episode": f"blocksworld/{name}/standard",
                              "call": c}) for c in range(2)]
    data = _data(tmp_path / "data", *lines)
    (data / "problems" / "blocksworld").mkdir(parents=True)
    # a renamed copy of a held-out problem, one of a public problem, and a problem of neither
    (data / "problems" / "blocksworld" / "s1-easy-01.pddl").write_text(
        shipped.read_text().replace("b1", "bx").replace("b2", "b1").replace("bx", "b2"))
    (data / "problems" / "blocksworld" / "s2-easy-01.pddl").write_text(other.read_text())
    loaded = load_training_data(str(data))
    account = loaded.sources[str(data)]
    dropped = account["dropped_as_shipped"]
    assert dropped.keys() == {"blocksworld/s1-easy-01", "blocksworld/s2-easy-01"}
    assert dropped["blocksworld/s1-easy-01"] == "blocksworld/heldout/pl9301-easy-01"
    # problem1 ships twice: in agentboard and, unchanged, in the agentboard-mixed split
    assert dropped["blocksworld/s2-easy-01"] in {"blocksworld/agentboard/problem1", "blocksworld/agentboard-mixed/problem1"}
    assert {r["problem"] for r in loaded.rows} == {"s3-easy-01"} and account["calls_kept"] == 2
