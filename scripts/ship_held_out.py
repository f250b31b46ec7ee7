#!/usr/bin/env python3
"""Write a held-out set as the split that ships it: pddl_domains/<domain>/problems/<split>/<name>.pddl.

The files are `held_out_problems(..., set_name=SET)` byte for byte, named as the set names them (the
public-like set: `pl<seed>-<level>-01`, split `heldout`); a file of the split that is not in the set is
removed. tests/generators/test_public_like.py checks that the shipped files are the set's, so rerun this after
changing the set or its generators (then `scripts/generate_expert_plans.py --splits heldout`).

Examples::

    python scripts/ship_held_out.py                  # the public-like set, as split `heldout`
    python scripts/ship_held_out.py --check          # exit 1 if the shipped files are not the set's
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from pddlworlds.files import atomic_write
from pddlworlds.training.problems import HELD_OUT_SETS, held_out_problems

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shipped = [name for name in HELD_OUT_SETS if HELD_OUT_SETS.get(name).split]
    parser.add_argument("--set", dest="set_name", default="public-like", choices=shipped,
                        help="held-out set with a split to ship (default: public-like)")
    parser.add_argument("--out", type=Path, default=REPO / "pddl_domains",
                        help="folder laid out like pddl_domains (default: the repository's)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the files differ")
    args = parser.parse_args(argv)
    spec = HELD_OUT_SETS.get(args.set_name)
    differ = []
    with tempfile.TemporaryDirectory() as tmp:
        for domain in spec.problems:
            folder = args.out / domain / "problems" / spec.split
            wanted = {p.path.name: p.path.read_bytes() for p in held_out_problems(tmp, [domain], args.set_name)}
            present = {p.name: p.read_bytes() for p in folder.glob("*.pddl")} if folder.is_dir() else {}
            changed = sorted(n for n in wanted.keys() | present.keys() if wanted.get(n) != present.get(n))
            differ += [f"{domain}/{name}" for name in changed]
            if args.check:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            for name in changed:
                if name in wanted:
                    atomic_write(folder / name, wanted[name])
                else:
                    (folder / name).unlink()
            print(f"{domain}: {len(wanted)} problems in {folder} ({len(changed)} written or removed)")
    if args.check and differ:
        print(f"{len(differ)} files differ from held-out set {args.set_name!r}: {', '.join(differ)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
