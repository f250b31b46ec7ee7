#!/usr/bin/env python3
"""Write the unsolvable variants, their proofs, and the `impossible` and mixed splits.

For each domain and each base split (`agentboard`, `generated`) it derives about one unsolvable variant
per four solvable problems (`pddlworlds.generators.unsolvable.derive`, seeded), keeps a variant only when
`pddlworlds.generators.unsolvable.prove` proves it unsolvable, and writes:

* `pddl_domains/<d>/problems/impossible/`: every variant;
* `pddl_domains/<d>/problems/<base>-mixed/`: the base split's problems (byte-identical copies) plus that
  base's variants, so about one problem in five is unsolvable;
* `planners/unsolvable.csv`: one proof per variant (method, time, states);
* `planners/index.csv`: rows for the mixed splits' solvable copies (the same plan and length as the base).

The same seed writes the same files (the proofs' times aside). Examples::

    python scripts/generate_unsolvable.py                 # the shipped splits (seed 0)
    python scripts/generate_unsolvable.py --domains gripper --dry-run
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from pddlworlds.artefacts.plans import read_index
from pddlworlds.artefacts.proofs import Proof, read_proofs, write_proofs
from pddlworlds.generators.unsolvable import (
    DEFAULT_SEED,
    DEFAULT_STATE_CAP,
    derive,
    prove,
    trivial_reason,
    write_variant,
)
from pddlworlds.planning import update_index
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.pddl import domain_constants, ignore_normalisation_warnings

BASE_SPLITS = ("agentboard", "generated")
IMPOSSIBLE_SPLIT = "impossible"
ORIGIN = {
    "agentboard": "a public AgentBoard problem; origin and licence in pddl_domains/README.md",
    "generated": "pddlworlds' seeded generated split (scripts/generate_problems.py)",
}


def mixed_split(base: str) -> str:
    return f"{base}-mixed"


def unsolvable_count(solvable: int) -> int:
    """About one in five of the mixed split: one variant per four solvable problems."""
    return max(1, round(solvable / 4))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--domains", nargs="+", choices=list(domains()), default=None,
                        help="default: every shipped domain")
    parser.add_argument("--cap", type=int, default=DEFAULT_STATE_CAP, help="state cap of the exhaustive search")
    parser.add_argument("--timeout", type=float, default=120.0, help="Fast Downward's limit per variant (s)")
    parser.add_argument("--dry-run", action="store_true", help="derive and prove, but write nothing")
    args = parser.parse_args(argv)
    ignore_normalisation_warnings()

    catalogue = domains()
    wanted = args.domains or list(catalogue)
    proofs = [p for p in read_proofs() if p.domain not in wanted]
    index_rows = []
    scratch = Path(tempfile.mkdtemp(prefix="pddlworlds-unsolvable-"))
    try:
        for name in wanted:
            domain = catalogue[name]
            constants = set(domain_constants(domain.domain_file.read_text(), domain.domain_file))
            written: dict[str, dict[str, Path]] = {}
            for base in BASE_SPLITS:
                names = domain.problems(base)
                parents = {p: domain.load(p, base) for p in names}
                found: dict[str, tuple[Proof, Path]] = {}

                def accept(variant, base=base, found=found, parents=parents, name=name, domain=domain,
                           constants=constants) -> bool:
                    parent = variant.parent
                    header = [
                        f"Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed {args.seed}).",
                        f"Parent: {name} {base}/{parent}, {ORIGIN[base]}.",
                        f"Change: {variant.description}. Proof: planners/unsolvable.csv.",
                    ]
                    path = scratch / f"{variant.name}.pddl"
                    write_variant(path, variant, constants, header)
                    outcome = prove(variant.task, domain.domain_file, path, cap=args.cap, timeout=args.timeout)
                    print(f"  {name}/{variant.name}: {outcome.status} ({outcome.method}, {outcome.states} states, "
                          f"{outcome.time_s:.2f} s)", flush=True)
                    if outcome.status != "unsolvable":
                        return False
                    reason = trivial_reason(variant.task)
                    found[variant.name] = (
                        Proof(name, variant.name, base, parent, variant.removal, variant.description, bool(reason),
                              reason, outcome.method, outcome.time_s, outcome.states, outcome.notes),
                        path,
                    )
                    return True

                variants = derive(name, parents, unsolvable_count(len(names)), args.seed, accept=accept, salt=base)
                written[base] = {v.name: found[v.name][1] for v in variants}
                proofs += [found[v.name][0] for v in variants]
                if len(variants) < unsolvable_count(len(names)):
                    print(f"warning: {name}/{base}: only {len(variants)} provable variants", file=sys.stderr)
                index_rows += [
                    {**row, "split": mixed_split(base),
                     "notes": f"byte-identical copy of {base}/{row['problem']}: its plan and proof. " + row.get("notes", "")}
                    for row in read_index()
                    if row["domain"] == name and row["split"] == base
                ]
            if args.dry_run:
                continue
            root = domain.folder / "problems"
            for split in (IMPOSSIBLE_SPLIT, *map(mixed_split, BASE_SPLITS)):
                folder = root / split
                if folder.is_dir():
                    shutil.rmtree(folder)
                folder.mkdir(parents=True)
            for base in BASE_SPLITS:
                for problem in domain.problems(base):
                    shutil.copyfile(domain.problem_file(problem, base), root / mixed_split(base) / f"{problem}.pddl")
                for variant, path in written[base].items():
                    shutil.copyfile(path, root / IMPOSSIBLE_SPLIT / f"{variant}.pddl")
                    shutil.copyfile(path, root / mixed_split(base) / f"{variant}.pddl")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    mine = [p for p in proofs if p.domain in wanted]
    print(f"\n{len(mine)} unsolvable variants, all proven:")
    for name in wanted:
        ours = [p for p in mine if p.domain == name]
        trivial = [p.problem for p in ours if p.trivial]
        searched = [p.problem for p in ours if not p.trivial]
        print(f"  {name}: {len(trivial)} trivial ({', '.join(trivial) or '-'}); "
              f"{len(searched)} need search ({', '.join(searched) or '-'})")
    if not args.dry_run:
        print(f"wrote {write_proofs(proofs)}")
        update_index(index_rows)
        print(f"wrote {len(index_rows)} mixed-split rows to planners/index.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
