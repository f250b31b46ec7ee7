"""A run's identity (`config.json`): what it measures, compared key by key when a run is resumed."""

from __future__ import annotations

import json
import platform
from typing import Any

from ..files import file_sha256
from ..llm import NO_MODEL
from ..worlds.profiles import DEFAULT_PROFILE
from .spec import RunPlan
from .store import utc_now

__all__ = ["CONFIG_FORMAT", "build_config", "config_differences", "resume_hint"]


CONFIG_FORMAT = 1


def _package_version() -> str:
    from ..version import __version__

    return __version__


def _prompts_version() -> str:
    from ..agents.prompts import PROMPTS_VERSION

    return str(PROMPTS_VERSION)


def build_config(
    plan: RunPlan, llm: Any = None, agent_flags: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The run's identity (compared on resume) plus `run_info` (when, where; not compared)."""
    uses_llm = plan.backend.kind != NO_MODEL
    config = {
        "format": CONFIG_FORMAT,
        "package_version": _package_version(),
        "agents": {a: (agent_flags or {}).get(a, {}) for a in plan.agents},
        "split": plan.split,
        "domains": plan.domains,
        "problems": plan.problems,
        "seeds": list(plan.seeds),
        "max_steps": plan.max_steps,
        "llm": plan.backend.describe(llm),
        "prompts_version": _prompts_version() if uses_llm else None,
    }
    # Each only when it is not the default, so runs made without these options keep their configuration.
    if plan.profile != DEFAULT_PROFILE:
        config["profile"] = plan.profile
    if plan.allow_impossible:
        from ..agents.unsolvable_rule import IMPOSSIBLE_RULE_VERSION

        config["allow_impossible"] = True
        config["impossible_rule"] = IMPOSSIBLE_RULE_VERSION if uses_llm else None
    if plan.prompt_file is not None:
        config["prompt_file"] = {"path": str(plan.prompt_file), "sha256": file_sha256(plan.prompt_file)}
    if plan.setting != "free":  # a setting that chooses: not comparable with published numbers
        config["setting"] = plan.setting
    if plan.choice_score is not None:
        config["choice_score"] = plan.choice_score
    if plan.score_all:
        config["score_all_candidates"] = True
    if plan.observation_mode is not None:
        config["observation_mode"] = plan.observation_mode
    if plan.domains_root is not None:  # where the problems are found again (resume, viewer)
        config["domains_root"] = plan.domains_root
    if plan.trial is not None:  # the trial, and the memory it reads (a store, by content)
        config["trial"] = plan.trial
    if plan.insights is not None:
        config["insights"] = plan.insights.describe()
    config = json.loads(json.dumps(config))  # tuples -> lists, so stored and new compare alike
    config["run_info"] = {"created_at": utc_now(), "host": platform.node()}
    return config


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


_MISSING = object()


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def config_differences(stored: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """'key (stored X, now Y)' for every compared key whose value differs (`run_info` is not compared)."""
    a = _flatten({k: v for k, v in stored.items() if k != "run_info"})
    b = _flatten({k: v for k, v in new.items() if k != "run_info"})
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, _MISSING), b.get(key, _MISSING)
        if va != vb:
            out.append(f"{key} (stored {_show(va)}, now {_show(vb)})")
    return out


def resume_hint(stored: dict[str, Any], new: dict[str, Any]) -> str:
    """What to add to resume a stored run that the new options would play otherwise, or "": the embedded
    model's default setting has moved (free until 2026-11-27, state-choice until 2026-11-28), so a run
    resumed under another setting is told which option brings it back. A run played in the free setting
    stores no setting (`build_config`)."""
    if "setting" not in stored and "setting" in new:
        return "A run stored without a setting was played in the free one: add --setting free."
    if "setting" in stored and stored["setting"] != new.get("setting"):
        return f"This run was played in the {stored['setting']} setting: add --setting {stored['setting']}."
    return ""
