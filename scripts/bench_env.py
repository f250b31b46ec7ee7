#!/usr/bin/env python
"""How fast the text environments step, against PDDLGym where it is installed.

For each shipped domain, on its largest public problem (by number of ground actions), with seeded random
valid actions:

* step/s: `env.step(text)` alone: parse the text, check the preconditions, apply, write the observation;
* list: the time to list the valid actions of a state (`env.valid_actions()`);
* step+list/s: one listing of the valid actions per step, then the step, all in text (the listing's
  texts, the step's parsing and observation);
* engine/s: the like-for-like figure against PDDLGym: one listing of the applicable actions per step
  (`task.applicable`), one of them applied and the goal tested, with no text on either side, as PDDLGym's
  own step+list (`action_space.all_ground_literals(state)` then `env.step(literal)`: a set of literals in
  and out, no sentences written, no text parsed).

If `pddlgym` is importable (`pip install "pddlworlds[bench]"`, PDDLGym 0.0.7 on the old `gym` API), the same
loop runs on PDDLGym: on the very same PDDL files where its parser takes them, and on its own comparable
environment (Blocks, Gripper, Tireworld), on whose problem file ours runs too where our reader takes it.
Each comparison alternates PDDLGym and ours in `--repeats` rounds on the same file and keeps each side's
best round, so both see the same machine load. Timings are wall-clock: compare ratios within one run.

    python scripts/bench_env.py [--steps 3000] [--seed 0] [--pddlgym-seconds 5] [--repeats 3] [--no-pddlgym]
        [--domains NAME ...] [--split SPLIT] [--gym] [--every-problem]

`--gym` steps ours through `gym.make` (its wrappers' checks included, as a Gymnasium user steps it); the
catalogue's worlds run their public ladder's largest problem.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import random
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass

import gymnasium as gym

import pddlworlds  # noqa: F401 -- registers the ids
from pddlworlds.env import PDDLTextEnv
from pddlworlds.registration import env_id
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.pddl import ignore_normalisation_warnings
from pddlworlds.worlds.profiles import DEFAULT_PROFILE

#: PDDLGym's own environment comparable to each domain.
PDDLGYM_COUNTERPART = {
    "blocksworld": "blocks",
    "gripper": "gripper",
    "tyreworld": "tireworld",
    "barman": None,
}


@dataclass
class Ours:
    domain: str
    problem: str
    actions: int
    atoms: int
    step_rate: float  # env.step(text) per second
    list_us: float  # microseconds per valid-action listing
    step_list_rate: float  # (listing + step) per second
    check_rate: float  # the "check valid actions" meta-action through env.step, per second
    engine_rate: float  # (applicable listing + apply + goal test) per second, no text


@dataclass
class Theirs:
    label: str
    rate: float | None  # (listing + step) per second
    note: str = ""
    #: Ours on the same problem file as this PDDLGym run, in rounds alternating with it: (text step+list/s,
    #: engine/s); None: our reader refused the file.
    ours: tuple[float, float] | None = None


def largest_problem(domain: str, split: str | None = None) -> tuple[str, int, int]:
    """(problem, ground actions, atoms) of the split's problem (default: the world's default split, the public
    problems or the public ladder) with the most ground actions."""
    env = PDDLTextEnv(domain=domain, split=split)
    sizes = []
    for name in env.problem_names:
        world = env.world_of(name)
        sizes.append((len(world.task.actions), len(world.task.atoms), name))
    actions, atoms, name = max(sizes, key=lambda s: (s[0], s[1]))
    return name, actions, atoms


def record_walk(env: PDDLTextEnv, steps: int, seed: int) -> list[str | None]:
    """A seeded random walk of valid action texts; None marks a reset (goal reached or no valid action)."""
    rng = random.Random(seed)
    env.reset(seed=seed)
    walk: list[str | None] = []
    while len(walk) < steps:
        valid = env.valid_actions()
        if not valid:
            walk.append(None)
            env.reset()
            continue
        text = rng.choice(valid)
        walk.append(text)
        if env.step(text)[2]:
            walk.append(None)
            env.reset()
    return walk


def make_ours(domain: str, split: str | None, problem: str, through_gym: bool):
    """Our environment on one problem: the class itself, or as `gym.make` builds it (its wrappers' checks
    included, the way a Gymnasium user steps it), with no step budget to reset on."""
    if through_gym:
        return gym.make(env_id(domain), split=split, problem=problem, step_budget=math.inf)
    return PDDLTextEnv(domain=domain, split=split, problem=problem, step_budget=math.inf)


def listing(env):
    """`valid_actions` of our environment, bare or wrapped by `gym.make`."""
    return env.unwrapped.valid_actions


def engine_rate(env, steps: int, seed: int) -> float:
    """(listing + apply + goal test) per second on the ground task, without any text: like PDDLGym's step."""
    task = env.unwrapped.world.task
    rng = random.Random(seed)
    state, done = task.init, 0
    start = time.perf_counter()
    while done < steps:
        applicable = task.applicable(state)
        if not applicable:
            state = task.init
            continue
        state = task.apply(state, applicable[rng.randrange(len(applicable))])
        done += 1
        if task.is_goal(state):
            state = task.init
    return steps / (time.perf_counter() - start)


def text_rate(env, steps: int, seed: int) -> tuple[float, float]:
    """(listing + step) per second through the environment in text, and its listing time in seconds."""
    rng = random.Random(seed)
    env.reset(seed=seed)
    list_time = step_time = 0.0
    done = 0
    valid_actions = listing(env)
    while done < steps:
        start = time.perf_counter()
        valid = valid_actions()
        listed = time.perf_counter()
        if not valid:
            env.reset()
            continue
        text = rng.choice(valid)
        before_step = time.perf_counter()
        terminated = env.step(text)[2]
        end = time.perf_counter()
        list_time += listed - start
        step_time += end - before_step
        done += 1
        if terminated:
            env.reset()
    return steps / (list_time + step_time), list_time


def bench_ours(domain: str, steps: int, seed: int, profile: str = DEFAULT_PROFILE, split: str | None = None) -> Ours:
    problem, n_actions, n_atoms = largest_problem(domain, split)
    env = PDDLTextEnv(domain=domain, split=split, problem=problem, profile=profile, step_budget=math.inf)
    walk = record_walk(env, steps, seed)

    # 1. step alone, replaying the recorded texts
    env.reset(seed=seed)
    elapsed, count = 0.0, 0
    for text in walk:
        if text is None:
            env.reset()
            continue
        start = time.perf_counter()
        env.step(text)
        elapsed += time.perf_counter() - start
        count += 1
    step_rate = count / elapsed

    # 2. listing alone and 3. listing + step, in the loop an agent would run
    step_list_rate, list_time = text_rate(env, steps, seed)

    # 4. the meta-action that lists the valid actions in words
    env.reset(seed=seed)
    start = time.perf_counter()
    n_check = max(200, steps // 10)
    for _ in range(n_check):
        env.step("check valid actions")
    check_rate = n_check / (time.perf_counter() - start)
    list_us = 1e6 * list_time / steps
    return Ours(domain, problem, n_actions, n_atoms, step_rate, list_us, step_list_rate, check_rate,
                engine_rate(env, steps, seed))


# --------------------------------------------------------------------------------------------------
# PDDLGym


def import_pddlgym():
    """The `pddlgym` module, or the reason it cannot be used."""
    try:
        with (
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            import pddlgym
            from pddlgym.core import PDDLEnv  # noqa: F401
    except Exception as exc:  # noqa: BLE001  (ImportError, or an old dependency failing at import time)
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0]
    return pddlgym, ""


def pddlgym_rate(env, seconds: float, max_steps: int, seed: int) -> float:
    """(listing + step) per second on a PDDLGym environment; the sort (for a seeded choice) is not timed."""
    rng = random.Random(seed)
    obs, _ = env.reset()
    elapsed, count = 0.0, 0
    wall_start = time.perf_counter()
    while count < max_steps and time.perf_counter() - wall_start < seconds:
        start = time.perf_counter()
        valid = env.action_space.all_ground_literals(obs)
        listed = time.perf_counter()
        valid = sorted(valid, key=str)
        if not valid:
            obs, _ = env.reset()
            elapsed += listed - start
            continue
        action = rng.choice(valid)
        before_step = time.perf_counter()
        obs, _, done, *_ = env.step(action)
        elapsed += (listed - start) + (time.perf_counter() - before_step)
        count += 1
        if done:
            obs, _ = env.reset()
    return count / elapsed if elapsed else float("nan")


def alternated(theirs_env, ours_env, seconds: float, steps: int, seed: int,
               repeats: int) -> tuple[float, tuple[float, float] | None]:
    """PDDLGym's rate and ours (text, engine) on one problem, measured in `repeats` alternating rounds (each
    side a share of the time box and of the steps per round), the best round of each kept: on a loaded
    machine the two sides then see the same load, and a slow round (another job's burst) is dropped."""
    theirs, text, engine = 0.0, 0.0, 0.0
    share = max(100, steps // repeats)
    for _ in range(repeats):
        theirs = max(theirs, pddlgym_rate(theirs_env, seconds / repeats, share, seed))
        if ours_env is not None:
            text = max(text, text_rate(ours_env, share, seed)[0])
            engine = max(engine, engine_rate(ours_env, share, seed))
    return theirs, ((text, engine) if ours_env is not None else None)


def bench_pddlgym(pddlgym, domain: str, problem: str, seconds: float, steps: int, seed: int,
                  repeats: int = 3, split: str | None = None, through_gym: bool = False) -> list[Theirs]:
    from pddlgym.core import PDDLEnv

    out = []
    ours = domains()[domain]
    folder = tempfile.mkdtemp(prefix="bench-pddlgym-")
    try:
        shutil.copy(ours.problem_file(problem, split or ours.default_split), folder)
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                options = {"operators_as_actions": True, "dynamic_action_space": True, "seed": seed}
                env = PDDLEnv(str(ours.domain_file), folder, **options)
                rate, mine = alternated(env, make_ours(domain, split, problem, through_gym), seconds, steps, seed,
                                        repeats)
                out.append(Theirs(f"same file {problem}", rate, ours=mine))
        except Exception as exc:  # noqa: BLE001  (its parser rejects some PDDL)
            out.append(Theirs(f"same file {problem}", None, f"cannot load it ({type(exc).__name__})"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    counterpart = PDDLGYM_COUNTERPART.get(domain)
    if counterpart is not None:
        base = os.path.join(os.path.dirname(pddlgym.__file__), "pddl")
        kwargs = (
            {"operators_as_actions": True, "dynamic_action_space": True} if counterpart == "gripper" else {}
        )
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                domain_file = os.path.join(base, f"{counterpart}.pddl")
                env = PDDLEnv(domain_file, os.path.join(base, counterpart), seed=seed, **kwargs)
                env.fix_problem_index(0)
                label = f"its {counterpart} #0"
                rate, mine = alternated(env, ours_on_file(domain_file, env.problems[0].problem_fname), seconds,
                                        steps, seed, repeats)
            out.append(Theirs(label, rate, ours=mine))
        except Exception as exc:  # noqa: BLE001
            out.append(Theirs(f"its {counterpart}", None, f"failed ({type(exc).__name__}: {exc})"))
    return out


Row = tuple[str, float | None, float | None, str]


def every_problem(pddlgym, domain: str, split: str | None, seconds: float, steps: int, seed: int,
                  repeats: int) -> list[Row]:
    """(problem, PDDLGym's rate, ours through gym.make, note) for every problem of the split: PDDLGym on a
    folder holding that one file, ours in the same alternating rounds (`alternated`)."""
    from pddlgym.core import PDDLEnv

    found = domains()[domain]
    split = split or found.default_split
    rows = []
    for problem in found.problems(split):
        folder = tempfile.mkdtemp(prefix="bench-pddlgym-")
        try:
            shutil.copy(found.problem_file(problem, split), folder)
            try:
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    env = PDDLEnv(str(found.domain_file), folder, operators_as_actions=True,
                                  dynamic_action_space=True, seed=seed)
                    rate, mine = alternated(env, make_ours(domain, split, problem, True), seconds, steps, seed,
                                            repeats)
                ours = mine[0] if mine else None
                if not rate and ours:  # its first step alone outlasts the time box: no ratio, a bound
                    rows.append((problem, None, ours, (f"PDDLGym took no step in {seconds} s; ours {ours:.0f}/s, "
                                                      f"so more than {ours * seconds:.0f}x")))
                else:
                    rows.append((problem, rate, ours, ""))
            except Exception as exc:  # noqa: BLE001  (its parser rejects some PDDL)
                rows.append((problem, None, None, f"PDDLGym cannot load it ({type(exc).__name__})"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return rows



def print_world_rows(world: str, rows: list[Row]) -> None:
    """One world's problems, each with its ratio (printed as each world finishes: a long sweep shows its work)."""
    for problem, rate, ours, note in rows:
        if rate is None or ours is None:
            print(f"{world:<14} {problem:<18} {note}", flush=True)
        else:
            print(f"{world:<14} {problem:<18} {rate:>10.0f} {ours:>9.0f} {ours / rate:>6.1f}x", flush=True)


def print_summary(results: dict[str, list[Row]]) -> None:
    """A line a world: how many problems PDDLGym loads, and the least and median ratio; then over all."""
    print()
    print(f"{'world':<14} {'loaded':>7} {'least':>8} {'median':>8}")
    every: list[float] = []
    for world, rows in results.items():
        ratios = sorted(ours / rate for _, rate, ours, _ in rows if rate and ours)
        every += ratios
        stalled = sum(1 for _, rate, ours, note in rows if rate is None and ours and note.startswith("PDDLGym took"))
        if stalled:
            print(f"{world:<14} {stalled} problem(s) where PDDLGym took no step in its time box (above)")
        if ratios:
            print(f"{world:<14} {len(ratios):>3}/{len(rows):<3} {ratios[0]:>7.1f}x {ratios[len(ratios) // 2]:>7.1f}x")
        else:
            print(f"{world:<14} {0:>3}/{len(rows):<3} PDDLGym loads none")
    if every:
        every.sort()
        print(f"{'all':<14} {len(every):>7} {every[0]:>7.1f}x {every[len(every) // 2]:>7.1f}x "
              f"({sum(r >= 50 for r in every)} of {len(every)} at 50x or more)")


def ours_on_file(domain_file: str, problem_file: str) -> PDDLTextEnv | None:
    """Our environment on a PDDLGym problem file, or None where our reader refuses it (its tireworld is
    probabilistic)."""
    try:
        return PDDLTextEnv(domain_file=domain_file, problem_files=[problem_file])
    except Exception:  # noqa: BLE001  (a PDDLError: not classical PDDL)
        return None


# --------------------------------------------------------------------------------------------------


OURS_WIDTHS = ("<12", "<10", ">7", ">6", ">9", ">8", ">11", ">8", ">9")
LEGEND = """\
step/s: env.step(text) alone (parse, check, apply, observe); list us: microseconds to list the valid
actions; step+list/s: one listing per step, as PDDLGym's figure; check/s: the 'check valid actions'
meta-action through env.step (listing and writing them); engine/s: a listing of the applicable actions
per step, one applied and the goal tested, no text (what PDDLGym's step+list does)."""


def ratio_row(domain: str, label: str, rate: float, text: float, engine: float) -> str:
    """One comparison: PDDLGym's rate, ours in text and without text on the same problem, both ratios."""
    return (f"{domain:<12} {label:<22} {rate:>8.0f} {text:>9.0f} {text / rate:>6.1f}x "
            f"{engine:>9.0f} {engine / rate:>6.1f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps per measurement (default 3000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pddlgym-seconds", type=float, default=5.0, help="time box per PDDLGym problem")
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternating rounds of PDDLGym and ours per problem; the best of each is kept")
    parser.add_argument("--no-pddlgym", action="store_true", help="skip PDDLGym even if it is installed")
    parser.add_argument("--domains", nargs="*", default=None, help="domains to run (default: all shipped)")
    parser.add_argument("--profile", default="pddlworlds", help="pddlworlds or agentboard")
    parser.add_argument("--split", default=None,
                        help="the split whose largest problem each domain runs (default: the world's own: "
                             "AgentBoard's problems for the public four, the public ladder for the catalogue)")
    parser.add_argument("--every-problem", action="store_true",
                        help="every problem of the split against PDDLGym, through gym.make; a line a problem and "
                             "a summary a world")
    parser.add_argument("--gym", action="store_true",
                        help="step ours through gym.make's wrappers against PDDLGym (as a Gymnasium user does)")
    args = parser.parse_args(argv)
    ignore_normalisation_warnings()

    names = args.domains or list(domains())
    pddlgym, why_not = (None, "skipped (--no-pddlgym)") if args.no_pddlgym else import_pddlgym()
    if args.every_problem:
        if pddlgym is None:
            print(f"--every-problem compares with PDDLGym, which is not available: {why_not}")
            return 1
        print(f"Every problem of the split, PDDLGym against ours through gym.make (listing + step per second, "
              f"best of {args.repeats} alternating rounds of at most {args.steps} steps or "
              f"{args.pddlgym_seconds} s each; target 50x)")
        print(f"{'world':<14} {'problem':<18} {'PDDLGym/s':>10} {'ours/s':>9} {'ratio':>7}", flush=True)
        swept: dict[str, list[Row]] = {}
        for name in names:
            swept[name] = every_problem(pddlgym, name, args.split, args.pddlgym_seconds, args.steps, args.seed,
                                        args.repeats)
            print_world_rows(name, swept[name])
        print_summary(swept)
        return 0

    results: list[tuple[Ours, list[Theirs]]] = []
    for name in names:
        ours = bench_ours(name, args.steps, args.seed, args.profile, args.split)
        theirs = (
            bench_pddlgym(pddlgym, name, ours.problem, args.pddlgym_seconds, args.steps, args.seed, args.repeats,
                          args.split, args.gym)
            if pddlgym
            else []
        )
        results.append((ours, theirs))

    print(
        f"pddlworlds environments ({args.profile} profile), largest public problem per domain, "
        f"{args.steps} seeded random valid steps"
    )
    columns = ("domain", "problem", "actions", "atoms", "step/s", "list us", "step+list/s", "check/s",
               "engine/s")
    header = " ".join(f"{c:{w}}" for c, w in zip(columns, OURS_WIDTHS))
    print(header)
    print("-" * len(header))
    for ours, _ in results:
        values = (
            ours.domain,
            ours.problem,
            ours.actions,
            ours.atoms,
            round(ours.step_rate),
            round(ours.list_us, 1),
            round(ours.step_list_rate),
            round(ours.check_rate),
            round(ours.engine_rate),
        )
        print(" ".join(f"{v:{w}}" for v, w in zip(values, OURS_WIDTHS)))
    print()
    print(LEGEND)
    print()
    print(f"Against PDDLGym (listing + step per second on the same problem file, best of {args.repeats} rounds")
    print("alternating with ours; ours in text does more than PDDLGym's step, engine/s the same; target: 50x)")
    header = (f"{'domain':<12} {'PDDLGym on':<22} {'PDDLGym':>8} {'ours text':>9} {'ratio':>7} "
              f"{'engine/s':>9} {'ratio':>7}")
    print(header)
    print("-" * len(header))
    for ours, theirs in results:
        for run in theirs:
            if run.rate is None:
                print(f"{ours.domain:<12} {run.label:<22} {run.note}")
            elif run.ours is None:
                print(f"{ours.domain:<12} {run.label:<22} {run.rate:>8.0f}  (our reader refuses the file)")
            else:
                print(ratio_row(ours.domain, run.label, run.rate, *run.ours))
    if pddlgym is None:
        print(f"\nPDDLGym not measured: {why_not}.")
        print("Install it with: pip install 'pddlworlds[bench]' (pddlgym==0.0.7).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
