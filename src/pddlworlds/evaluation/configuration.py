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

__all__ = ["CONFIG_FORMAT", "build_config", "config_differences", "domain_files", "resume_hint"]


CONFIG_FORMAT = 1
#: Keys compared on resume only when the stored configuration has them: runs made before they were recorded
#: resume as they were.
RECORDED_SINCE = ("domain_files",)


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
    config["domain_files"] = domain_files(plan)
    if plan.trial is not None:  # the trial, and the memory it reads (a store, by content)
        config["trial"] = plan.trial
    if plan.insights is not None:
        config["insights"] = plan.insights.describe()
    config = json.loads(json.dumps(config))  # tuples -> lists, so stored and new compare alike
    config["run_info"] = {"created_at": utc_now(), "host": platform.node()}
    return config


def domain_files(plan: RunPlan) -> dict[str, dict[str, Any]]:
    """The files each domain was played from, by content (sha256): `domain.pddl`, the text files the profile
    reads beside it (`text`, None without), and each problem played. `pddlworlds compare` pairs only runs whose
    files are the same, whatever their folders are named."""
    from ..worlds.catalogue import get_domain
    from ..worlds.profiles import OWN_TEXT_FILE, get_profile

    out: dict[str, dict[str, Any]] = {}
    for name, problems in plan.problems.items():
        domain = get_domain(name, plan.domains_root)
        texts = [domain.folder / OWN_TEXT_FILE, get_profile(plan.profile).text_file_beside(domain.domain_file)]
        found = sorted({str(p) for p in texts if p is not None and p.is_file()})
        out[name] = {
            "domain": file_sha256(domain.domain_file),
            "text": ",".join(file_sha256(p) for p in found) or None,
            "problems": {p: file_sha256(domain.problem_file(p, plan.split)) for p in problems},
        }
    return out


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
    """'key (stored X, now Y)' for every compared key whose value differs (`run_info` is not compared, nor a
    key of `RECORDED_SINCE` that the stored configuration lacks)."""
    skipped = {"run_info", *(k for k in RECORDED_SINCE if k not in stored)}
    a = _flatten({k: v for k, v in stored.items() if k not in skipped})
    b = _flatten({k: v for k, v in new.items() if k not in skipped})
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
    stores no setting (`build_config`). Likewise the model: a choosing setting's run on the shipped worlds
    plays the cut vocabulary since 2026-11-29, and one stored on the full vocabulary is told `embedded:full`."""
    if "setting" not in stored and "setting" in new:
        return "A run stored without a setting was played in the free one: add --setting free."
    if "setting" in stored and stored["setting"] != new.get("setting"):
        return f"This run was played in the {stored['setting']} setting: add --setting {stored['setting']}."
    was, now = (str((side.get("llm") or {}).get("model_id", "")) for side in (stored, new))
    if "-choice-vocab" in now and was == now.replace("-choice-vocab", "", 1):
        return "This run was played on the model's full vocabulary (eval's default before 2026-11-29): add --llm embedded:full."
    return ""
