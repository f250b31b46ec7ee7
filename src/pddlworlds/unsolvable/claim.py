"""The `impossible` meta-action in words: how an agent claims that the goal cannot be reached.

The environment offers it only when made with `allow_impossible=True`. A claim is recognised from a
few fixed phrasings ("impossible", "this task is impossible", "the goal cannot be reached", ...),
matched on whole words after case, punctuation and filler words are set aside, so no real action and no
negation ("it is not impossible") reads as a claim.
"""

from __future__ import annotations

from ..worlds.action_parser import FILLER_WORDS
from ..worlds.wording import tokens

__all__ = ["CLAIM_OBSERVATION", "IMPOSSIBLE_ACTION", "is_claim", "list_with_claim"]

#: The canonical text of the action, as `check valid actions` lists it.
IMPOSSIBLE_ACTION = "impossible"
#: What the agent reads after a claim; the same whether the claim was right or not.
CLAIM_OBSERVATION = "You declared the task impossible. The episode ends."

# Word sequences (filler words removed) that mean "no plan exists".
_CLAIMS = frozenset(
    tuple(phrase.split())
    for phrase in (
        "impossible",
        "task impossible",
        "this task impossible",
        "goal impossible",
        "this goal impossible",
        "goal cannot be reached",
        "goal can not be reached",
        "goal cannot reached",
        "goal unreachable",
        "goal not reachable",
        "task cannot be done",
        "task cannot be solved",
        "problem unsolvable",
        "task unsolvable",
        "problem impossible",
        "no plan exists",
        "there no plan",
        "declare impossible",
        "claim impossible",
    )
)


def is_claim(text: str) -> bool:
    """Whether `text` claims the task is impossible (one of the fixed phrasings, nothing more)."""
    words = tuple(w for w in tokens(text) if w not in FILLER_WORDS)
    return words in _CLAIMS


def list_with_claim(message: str, actions: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The `check valid actions` reply and list with `impossible` added at the end."""
    listed = (*actions, IMPOSSIBLE_ACTION)
    return "Valid actions are: " + ", ".join(listed) + ".", listed
