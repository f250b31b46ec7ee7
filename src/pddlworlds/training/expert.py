"""The expert from any state: the optimal next actions from where an episode stands, not a replay of
the first plan.

On-policy data labels every state an agent reaches with what the expert would do there. A plan from a
state is a breadth-first search from it (optimal; it also proves a dead end) when the search stays
small, else Fast Downward from that state (`planning.solve(..., initial_atoms=...)`: A*+LM-cut, then the satisficing configuration).
Every plan found also answers for the states along it (a suffix of an optimal plan is optimal), so an
agent that follows the expert for a while costs one search. A state from which no plan exists (a dead
end) is answered with `None`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..worlds.search import breadth_first_search
from ..worlds.world import World

__all__ = ["BFS_MAX_NODES", "StateExpert"]

BFS_MAX_NODES = 100_000


@dataclass
class StateExpert:
    """Plans from states of one problem's `World`; `how` counts which search answered."""

    world: World
    domain_file: Path
    problem_file: Path
    text_file: Path | None = None
    timeout: float = 60
    bfs_max_nodes: int = BFS_MAX_NODES
    how: dict[str, int] = field(default_factory=dict)
    _plans: dict[int, tuple[int, ...] | None] = field(default_factory=dict, repr=False)

    def plan_from(self, state: int) -> tuple[int, ...] | None:
        """Action indices of a plan from `state` to the goal (optimal unless only fd-sat found one), or
        None when the goal cannot be reached from it."""
        if state in self._plans:
            return self._plans[state]
        task = self.world.task
        search = breadth_first_search(replace(task, init=state), self.bfs_max_nodes)
        plan: list[int] | None = list(search.plan) if search.status == "solvable" else None
        how = "bfs" if search.status == "solvable" else "dead-end"
        if search.status == "capped":
            plan, how = self._planner(state)
        self.how[how] = self.how.get(how, 0) + 1
        if plan is None:
            self._plans[state] = None
            return None
        s = state
        for i in range(len(plan) + 1):
            self._plans.setdefault(s, tuple(plan[i:]))
            if i < len(plan):
                s = task.apply(s, plan[i])
        return self._plans[state]

    def _planner(self, state: int) -> tuple[list[int] | None, str]:
        from ..planning import solve
        from ..planning.targets import replay

        task = self.world.task
        fluent = {task.atoms[i] for i in range(len(task.atoms)) if state >> i & 1}
        static = {atom for atom in self.world.lifted.init if atom not in task.atom_index}
        last = ""
        for planner in ("fd-opt", "fd-sat"):
            result = solve(self.domain_file, self.problem_file, planner=planner, timeout=self.timeout,
                           initial_atoms=sorted(fluent | static), text_file=self.text_file)
            if result.solved:
                played = replay(self.world, result.actions, state)
                if played.indices is None or not played.goal:
                    raise RuntimeError(f"{self.problem_file}: {planner}'s plan from a state does not replay: {played}")
                return list(played.indices), planner
            if result.status.value == "unsolvable":
                return None, "dead-end"
            last = f"{result.status.value}: {result.message}"
        raise RuntimeError(f"{self.problem_file}: no plan from a state ({last})")

    def next_action(self, state: int) -> int | None:
        """The expert's next action from `state` (None at the goal or at a dead end)."""
        plan = self.plan_from(state)
        return plan[0] if plan else None
