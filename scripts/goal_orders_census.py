"""How many problems of each world have reasonable orders among their goal's conditions, and what finding
them costs (`worlds/goal_orders.py`): the figures in docs/engine.md.

    python scripts/goal_orders_census.py                 # every world's ladder problems
    python scripts/goal_orders_census.py --split heldout --domains blocksworld,gripper
"""

from __future__ import annotations

import argparse
import time
import warnings


def census(split: str, names: list[str] | None) -> list[dict]:
    """A row per problem: its world, atoms, actions, goal conditions, orders (pairs) and process times."""
    from pddlworlds.worlds.catalogue import domains
    from pddlworlds.worlds.goal_orders import goal_orders, mutex_masks
    from pddlworlds.worlds.world import World

    rows = []
    for name, domain in sorted(domains().items()):
        if names and name not in names:
            continue
        for problem in domain.problems(split):
            world = World.load(domain.domain_file, domain.problem_file(problem, split), domain.text_file)
            start = time.process_time()
            mutexes = mutex_masks(world.task)
            middle = time.process_time()
            orders = goal_orders(world.task, mutexes)
            end = time.process_time()
            rows.append({"world": name, "problem": problem, "atoms": len(world.task.atoms),
                         "actions": len(world.task.actions), "goals": world.task.goal_pos.bit_count(),
                         "orders": sum(mask.bit_count() for mask in orders.before.values()),
                         "mutex_s": middle - start, "orders_s": end - middle})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="ladder", help="problem split of every world (default: ladder)")
    parser.add_argument("--domains", default="", help="comma-separated worlds (default: all)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the catalogue's normalisation notes
    rows = census(args.split, [n for n in args.domains.split(",") if n] or None)
    if not rows:
        print("no problems")
        return 1
    worlds = sorted({r["world"] for r in rows})
    print(f"{'world':20s} {'problems':>8s} {'with orders':>11s} {'orders (max)':>12s} {'mutex s (max)':>13s}")
    for world in worlds:
        mine = [r for r in rows if r["world"] == world]
        print(f"{world:20s} {len(mine):8d} {sum(1 for r in mine if r['orders']):11d} "
              f"{max(r['orders'] for r in mine):12d} {max(r['mutex_s'] for r in mine):13.3f}")
    slowest = max(rows, key=lambda r: r["mutex_s"])
    print(f"\n{len(rows)} problems, {sum(1 for r in rows if r['orders'])} with orders, in "
          f"{len({r['world'] for r in rows if r['orders']})} worlds; invariants at most {slowest['mutex_s']:.2f} s "
          f"({slowest['world']} {slowest['problem']}), orders at most {max(r['orders_s'] for r in rows) * 1000:.0f} ms "
          "(process time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
