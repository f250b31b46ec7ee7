"""The words that offer the `impossible` action to an LLM agent, added only when the environment offers it.

Kept out of the prompt templates so a run without the option sends byte-for-byte the prompts it sent
before; an evaluation that offers the action records `IMPOSSIBLE_RULE_VERSION` in its configuration.
"""

from __future__ import annotations

from typing import Any

from ..unsolvable.claim import IMPOSSIBLE_ACTION

__all__ = ["IMPOSSIBLE_RULE", "IMPOSSIBLE_RULE_VERSION", "offers_impossible", "with_impossible_rule"]

IMPOSSIBLE_RULE_VERSION = "pw-impossible-1"
IMPOSSIBLE_RULE = (
    "Some tasks cannot be done: an object the goal needs may be missing, or the goal may ask for something "
    f'that can never hold. If you are sure the goal cannot be reached, write "Action: {IMPOSSIBLE_ACTION}". '
    "It ends the episode; on a task that can be done it counts as a failure."
)


def offers_impossible(env: Any) -> bool:
    """Whether the (possibly wrapped) environment accepts the `impossible` action."""
    return bool(getattr(getattr(env, "unwrapped", env), "allow_impossible", False))


def with_impossible_rule(system: str, env: Any) -> str:
    """`system` with the rule appended when `env` offers the action, else unchanged."""
    return f"{system}\n\n{IMPOSSIBLE_RULE}" if offers_impossible(env) else system
