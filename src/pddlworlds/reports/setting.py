"""What a run's setting means for its report: whether it may stand beside published numbers, and the
setting in words for the report's header (the setting's name is `artefacts.runs.config_setting`)."""

from __future__ import annotations

from typing import Any

from ..artefacts.runs import config_setting

__all__ = ["comparable_with_published", "setting_words"]


def comparable_with_published(config: dict[str, Any]) -> bool:
    """Whether a run may stand beside published numbers: its setting may (`Setting.comparable`: free
    decoding, as every published run) and its observations do not show the whole state (`fluents`, which
    no published run saw). The profile is the report's own question (AgentBoard's models need theirs)."""
    from ..agents.settings import SETTINGS

    name = config_setting(config)
    return name in SETTINGS and SETTINGS[name].comparable and config.get("observation_mode") != "fluents"


def setting_words(config: dict[str, Any]) -> str:
    """The setting the run's LLM agents played in, in words (the report's header)."""
    from ..agents.settings import SETTINGS

    name = config_setting(config)
    setting = SETTINGS.get(name)
    words = setting.summary if setting is not None else "a setting this version does not know"
    rule = config.get("choice_score")
    if rule:
        words += f"; candidates ranked by **{rule}** instead"
    mode = config.get("observation_mode")
    if mode and (setting is None or setting.observation_mode != mode):
        words += f"; observation mode **{mode}**"
    if name == "free":
        return f"**free** ({words})"
    return f"**{name}** ({words}; not comparable with published numbers, which are all free decoding)"
