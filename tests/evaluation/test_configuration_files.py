"""A run's configuration records the domain files it played by content, and a run stored before they were
recorded still resumes (`evaluation.configuration.RECORDED_SINCE`), while one whose files changed does not."""

from __future__ import annotations

from pddlworlds.evaluation.configuration import build_config, config_differences
from pddlworlds.evaluation.spec import RunPlan


def test_domain_files_are_compared_only_where_the_stored_run_has_them() -> None:
    config = build_config(RunPlan(agents=["expert"], problems={"blocksworld": ["problem1"]}, max_steps=5))
    files = config["domain_files"]["blocksworld"]
    assert len(files["domain"]) == 64 and len(files["problems"]["problem1"]) == 64
    older = {k: v for k, v in config.items() if k != "domain_files"}
    assert config_differences(older, config) == []
    changed = {**config, "domain_files": {"blocksworld": {**files, "domain": "0" * 64}}}
    assert config_differences(changed, config) == [
        f"domain_files.blocksworld.domain (stored \"{'0' * 64}\", now \"{files['domain']}\")"]
