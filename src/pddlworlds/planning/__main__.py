"""`python -m pddlworlds.planning plan|expert ...`: the planner's commands without the `pddlworlds` front."""

import sys

from .cli import main

sys.exit(main())
