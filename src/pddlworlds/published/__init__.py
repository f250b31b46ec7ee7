"""Results other people published on our problems, shipped as data with their origin, for comparison.

`published_results()` gives the twelve models of AgentBoard's leaderboard, episode by episode, on the 60
problems of the `agentboard` split (see `agentboard_results/README.md` for the origin and the mapping).
"""

from .agentboard import (
    MODEL_LABELS,
    MODELS,
    PUBLISHED_SOURCE,
    PUBLISHED_SPLIT,
    PUBLISHED_STEPS,
    PublishedEpisode,
    PublishedError,
    PublishedScores,
    load_model,
    model_label,
    parse_results,
    pooled,
    problem_order,
    published_results,
)

__all__ = [
    "MODELS",
    "MODEL_LABELS",
    "PUBLISHED_SOURCE",
    "PUBLISHED_SPLIT",
    "PUBLISHED_STEPS",
    "PublishedEpisode",
    "PublishedError",
    "PublishedScores",
    "load_model",
    "model_label",
    "parse_results",
    "pooled",
    "problem_order",
    "published_results",
]
