"""Cross-trial insight memory (MSI-style): rules distilled from past episodes at three scales.

store.py (the JSON file) - categories.py (task category of a problem) - operations.py (reading ADD/EDIT/
REMOVE/AGREE/MOVE from a reply) - editing.py (applying them: scores, cap) - experience.py (what an update
learns from: `success` or `pair`) - prompts.py + generation.py (one model call per experience) -
selection.py + embedding.py (the rules a new episode sees) - memory.py (a store version per trial: the
`TrialMemory` that `pddlworlds eval --insights` loads for `evaluation/trials.py`).
"""

from __future__ import annotations

from .categories import category_of, task_category
from .editing import DEFAULT_CAP, EditContext, EditLog, apply_operations
from .experience import MODES, Experience, select_experiences
from .generation import GenerationOptions, update_store
from .memory import InsightMemory
from .operations import Operation, ParsedReply, parse_operations
from .selection import InsightSelector, InsightUse, select_rules
from .store import InsightStore, InsightStoreError, Rule

__all__ = [
    "DEFAULT_CAP",
    "MODES",
    "EditContext",
    "EditLog",
    "Experience",
    "GenerationOptions",
    "InsightMemory",
    "InsightSelector",
    "InsightStore",
    "InsightStoreError",
    "InsightUse",
    "Operation",
    "ParsedReply",
    "Rule",
    "apply_operations",
    "category_of",
    "parse_operations",
    "select_experiences",
    "select_rules",
    "task_category",
    "update_store",
]
