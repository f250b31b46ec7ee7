"""Build a catalogue world's ladder: draw candidates per band, prove each optimal, keep those of the band.

For each band (`worlds.ladder.BANDS`), candidates 1, 2, ... of the world's generator are drawn with the
given seed and proven optimal by Fast Downward (`fd-opt`: the cheapest plan on a domain with action costs,
and `fd-opt-length` beside it for the shortest; the shortest alone elsewhere). A candidate is kept when its
proven optimum (cost with action costs, length without) lies in the band, its goal does not already hold,
and it is equal up to renaming objects to no problem kept before nor to a problem with another part (the
world's other splits, its in-context example, the files a caller names: `avoid`); the first `per_band` kept go to the public
split, the next `heldout_per_band` to the held-out one. Candidates are proven `jobs` at a time and judged in
their order, so the ladder depends only on the seed and the proofs: a search gets `timeout` seconds of CPU
time (not of the clock, so a busy machine keeps the same candidates), and one that runs out drops its
candidate and is reported (raise `timeout`, or shrink the band's problems, if that happens).

What it writes: `pddl_domains/<world>/problems/{ladder,ladder-heldout}/*.pddl` (stale files of its own
removed), the plans under `planners/<world>/` and their rows in the plan index.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..artefacts.plans import cheapest_plan_file
from ..files import atomic_write
from ..planning import solve
from ..planning.configs import get_planner, planner_version
from ..planning.results import Plan
from ..planning.store import update_index, write_plan_file
from ..worlds.catalogue import Domain, get_domain, load_task
from ..worlds.ladder import BANDS, HELDOUT_SPLIT, LADDER_SPLIT, LADDER_SPLITS, ladder_problem_name
from ..worlds.pddl import LiftedTask, normalisation_warnings_ignored
from ..worlds.renaming import same_up_to_renaming, structure_hash
from .ladders import HEADER_MARK, Candidate, LadderGenerator, draw_candidate, ladder_generators

__all__ = ["Kept", "LadderReport", "build_ladder", "prove_candidate"]


@dataclass
class Proof:
    """What the planner proved of one candidate."""

    length: int | None = None  # the shortest plan's length
    cost: int | None = None  # the cheapest plan's cost (action costs only)
    shortest: Plan | None = None
    cheapest: Plan | None = None
    problem: str = ""  # why not proven, if not

    @property
    def optimum(self) -> int | None:
        """What the band is judged by: the cost where the domain has costs, else the length."""
        return self.cost if self.cheapest is not None else self.length


@dataclass(frozen=True)
class Kept:
    candidate: Candidate
    split: str
    name: str
    proof: Proof


@dataclass
class LadderReport:
    world: str
    kept: list[Kept] = field(default_factory=list)
    drawn: dict[str, int] = field(default_factory=dict)  # band -> candidates drawn
    rejected: dict[str, dict[str, int]] = field(default_factory=dict)  # band -> reason -> count
    timeouts: list[str] = field(default_factory=list)

    def reject(self, band: str, reason: str) -> None:
        self.rejected.setdefault(band, {}).setdefault(reason, 0)
        self.rejected[band][reason] += 1


#: Wall-clock seconds a proof may take for each second of CPU time it is allowed: generous, so that on a
#: loaded machine the CPU limit, not the clock, decides which candidates are proven.
WALL_PER_CPU = 20


def prove_candidate(domain_file: Path, text: str, costs: bool, timeout: float, nice: int,
                    planner: str = "fd-opt") -> Proof:
    """Prove a candidate's shortest plan (and its cheapest, where the domain has action costs); `timeout` is
    each search's CPU time, so the same seed keeps the same candidates however busy the machine."""
    with tempfile.TemporaryDirectory(prefix="pddlworlds-ladder-") as tmp:
        path = Path(tmp) / "problem.pddl"
        path.write_text(text)
        proof = Proof()
        wall = timeout * WALL_PER_CPU + 60
        shortest = solve(domain_file, path, "fd-opt-length" if costs else planner, wall, nice=nice,
                         cpu_seconds=timeout)
        if not shortest.solved or not shortest.optimal:
            proof.problem = f"shortest plan: {shortest.status.value}: {shortest.message[:200]}"
            return proof
        proof.shortest, proof.length = shortest, shortest.length
        if costs:
            cheapest = solve(domain_file, path, planner, wall, nice=nice, cpu_seconds=timeout)
            if not cheapest.solved or not cheapest.optimal:
                proof.problem = f"cheapest plan: {cheapest.status.value}: {cheapest.message[:200]}"
                return proof
            proof.cheapest, proof.cost = cheapest, cheapest.cost
        return proof


def _task(domain_file: Path, text: str) -> LiftedTask:
    with tempfile.TemporaryDirectory(prefix="pddlworlds-ladder-") as tmp:
        path = Path(tmp) / "problem.pddl"
        path.write_text(text)
        with normalisation_warnings_ignored():
            return load_task(domain_file, path)


def build_ladder(
    world: str,
    *,
    seed: int = 0,
    per_band: int = 10,
    heldout_per_band: int = 5,
    timeout: float = 120,
    max_candidates: int = 400,
    jobs: int = 2,
    nice: int = 10,
    generator: LadderGenerator | None = None,
    log: Callable[[str], None] = print,
    write: bool = True,
    avoid: Sequence[str | Path] = (),
) -> LadderReport:
    """Draw, prove and keep `per_band` public and `heldout_per_band` held-out problems per band of `world`
    (see the module docstring); write them unless `write` is False. A band still short after
    `max_candidates` draws is an error naming the band and why its candidates were refused.

    A candidate equal up to renaming to one of the world's problems outside the ladder (its other splits,
    its in-context example) or to a file of `avoid` (problems with a role elsewhere, such as the training
    held-out sets) is refused before it is proved: a problem plays one part."""
    domain = get_domain(world)
    generator = generator or ladder_generators()[domain.name]
    report = LadderReport(domain.name)
    known = _known_tasks(domain, avoid)
    want = per_band + heldout_per_band
    costs: bool | None = None
    for band in BANDS:
        kept_tasks: list[LiftedTask] = []
        kept_hashes: list[str] = []
        band_kept: list[tuple[Candidate, Proof]] = []
        index = 0
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            while len(band_kept) < want:
                if index >= max_candidates:
                    raise RuntimeError(
                        f"{domain.name}: band {band.name} has {len(band_kept)} of {want} problems after "
                        f"{max_candidates} candidates (refused: {report.rejected.get(band.name, {})}); widen or "
                        "move the band's parameter ranges in the generator")
                drawn = [draw_candidate(generator, band.name, i, seed)
                         for i in range(index + 1, min(index + max(1, jobs), max_candidates) + 1)]
                index += len(drawn)
                batch, tasks = [], []
                for candidate in drawn:
                    task = _task(domain.domain_file, candidate.text)
                    if _equal_to_any(task, known):
                        report.reject(band.name, "equal up to renaming to a problem outside the ladder")
                        continue
                    batch.append(candidate)
                    tasks.append(task)
                if not batch:
                    continue
                if costs is None:
                    costs = tasks[0].costs
                proofs = list(pool.map(lambda c, costed=costs: prove_candidate(
                    domain.domain_file, c.text, costed, timeout, nice, generator.planner), batch))
                for candidate, task, proof in zip(batch, tasks, proofs):
                    if len(band_kept) >= want:
                        break
                    reason = _refusal(task, proof, band, kept_tasks, kept_hashes)
                    if reason == "timeout":
                        report.timeouts.append(f"{band.name} candidate {candidate.index}: {proof.problem}")
                    if reason:
                        report.reject(band.name, reason)
                        continue
                    band_kept.append((candidate, proof))
                    kept_tasks.append(task)
                    kept_hashes.append(structure_hash(task))
        report.drawn[band.name] = index
        for i, (candidate, proof) in enumerate(band_kept):
            split = LADDER_SPLIT if i < per_band else HELDOUT_SPLIT
            number = i + 1 if i < per_band else i + 1 - per_band
            report.kept.append(Kept(candidate, split, ladder_problem_name(split, band.name, number), proof))
        log(f"{domain.name} {band.name}: kept {len(band_kept)} of {index} candidates "
            f"(refused: {report.rejected.get(band.name, {})})")
    if write:
        _write(domain, report, bool(costs))
    return report


def _known_tasks(domain: Domain, avoid: Sequence[str | Path]) -> dict[str, list[LiftedTask]]:
    """The problems a ladder must not repeat, by `structure_hash`: the world's problems of splits other than
    the ladder's, its in-context example, and the files of `avoid`."""
    files = [domain.problem_file(name, split) for split in domain.splits() if split not in LADDER_SPLITS
             for name in domain.problems(split)]
    example = domain.folder / "example.pddl"
    files += [example] if example.is_file() else []
    files += [Path(f) for f in avoid]
    known: dict[str, list[LiftedTask]] = {}
    for path in files:
        with normalisation_warnings_ignored():
            task = load_task(domain.domain_file, path)
        known.setdefault(structure_hash(task), []).append(task)
    return known


def _equal_to_any(task: LiftedTask, known: dict[str, list[LiftedTask]]) -> bool:
    return any(same_up_to_renaming(task, other) for other in known.get(structure_hash(task), ()))


def _refusal(task: LiftedTask, proof: Proof, band, kept: list[LiftedTask], hashes: list[str]) -> str:
    """Why a proven candidate is not kept ("" when it is)."""
    if proof.problem:
        return "timeout" if "timeout" in proof.problem.lower() else "not proven"
    optimum = proof.optimum
    if optimum is None or optimum == 0 or proof.length == 0:
        return "goal holds at the start"
    if optimum < band.low:
        return "below the band"
    if optimum > band.high:
        return "above the band"
    digest = structure_hash(task)
    for other, other_digest in zip(kept, hashes):
        if digest == other_digest and same_up_to_renaming(task, other):
            return "equal up to renaming to one kept"
    return ""


def _write(domain: Domain, report: LadderReport, costs: bool) -> None:
    """The problem files, the plans and their index rows; this builder's stale files removed."""
    written: dict[str, set[Path]] = {LADDER_SPLIT: set(), HELDOUT_SPLIT: set()}
    rows = []
    for kept in report.kept:
        folder = domain.folder / "problems" / kept.split
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{kept.name}.pddl"
        atomic_write(path, kept.candidate.text)
        written[kept.split].add(path)
        rows.append(_store(domain.name, kept, costs))
    for split, paths in written.items():
        for stale in sorted((domain.folder / "problems" / split).glob("*.pddl")):
            if stale not in paths and stale.read_text().startswith(HEADER_MARK):
                stale.unlink()
    update_index(rows)


def _store(world: str, kept: Kept, costs: bool) -> dict[str, object]:
    proof = kept.proof
    shortest, cheapest = proof.shortest, proof.cheapest
    assert shortest is not None  # kept candidates are proven
    method = shortest.details.get("method", "")
    config = get_planner(shortest.planner)
    notes = [f"{config.proof or 'admissible A* finished'}; plan validated (replay)",
             f"candidate {kept.candidate.index} of band {kept.candidate.band}, seed {kept.candidate.seed}"]
    comments = ["optimal (shortest)" if costs else "optimal", f"planner: {planner_version(config)}",
                f"configuration: {method}", f"generator: {world} {kept.candidate.parameters}"]
    write_plan_file(world, kept.name, shortest.actions, comments, cost=shortest.cost if costs else None)
    time_s = shortest.time_s
    if cheapest is not None:
        write_plan_file(world, kept.name, cheapest.actions,
                        ["cost-optimal", f"planner: {planner_version(get_planner(cheapest.planner))}",
                         f"configuration: {cheapest.details.get('method', '')}"],
                        path=cheapest_plan_file(world, kept.name), cost=cheapest.cost)
        notes.append(f"cheapest plan {cheapest.length} steps at cost {cheapest.cost} "
                     f"({cheapest.details.get('method', '')}); shortest plan costs {shortest.cost}")
        method = f"{method} (length, costs taken out); {cheapest.details.get('method', '')} (cost)"
        time_s += cheapest.time_s
    return {
        "domain": world, "split": kept.split, "problem": kept.name, "length": proof.length, "optimal": "true",
        "planner": planner_version(config), "method": method, "solve_time_s": f"{time_s:.1f}",
        "notes": "; ".join(notes), "cost": proof.cost if cheapest is not None else "",
    }
