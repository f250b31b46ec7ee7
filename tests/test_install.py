"""The built wheel works on its own: from outside the checkout it finds the domains inside the package."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from pddlworlds.worlds.catalogue import domains

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, sys
import gymnasium as gym
import pddlworlds
from pddlworlds.worlds.catalogue import data_dir, domains

out = {
    "file": pddlworlds.__file__,
    "domains_dir": str(data_dir("pddl_domains")),
    "planners_dir": str(data_dir("planners")),
    "envs": {},
}
for name, domain in sorted(domains().items()):
    env = gym.make(f"pddlworlds/{name.capitalize()}-v0")
    obs, info = env.reset(seed=0)
    first = env.unwrapped.valid_actions()[0]
    _, _, _, _, after = env.step(first)
    out["envs"][name] = {
        "problems": len(env.unwrapped.problem_names),
        "valid": after["action_valid"],
        "domain_file": str(domain.domain_file),
    }
    env.close()
d = domains()["blocksworld"]
env = pddlworlds.make_env(d.domain_file, d.problem_file("problem1"))
env.reset()
out["make_env"] = env.step("unstack b2 from b3")[4]["action_valid"]
from pddlworlds.published import published_results
out["published"] = {m: len(eps) for m, eps in published_results().items()}
print(json.dumps(out))
"""


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, check=False, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.slow
def test_wheel_works_outside_the_checkout(tmp_path: Path) -> None:
    dist, site, cwd = tmp_path / "dist", tmp_path / "site", tmp_path / "elsewhere"
    cwd.mkdir()
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(REPO)]
    if importlib.util.find_spec("hatchling") is not None:
        build.insert(5, "--no-build-isolation")  # fast and offline; otherwise pip fetches hatchling itself
    run(build, cwd=cwd)
    (wheel,) = dist.glob("pddlworlds-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(site)
    assert "pddlworlds/pddl_domains/blocksworld/domain.pddl" in names
    assert "pddlworlds/pddl_domains/barman/text.toml" in names
    assert any(n.startswith("pddlworlds/planners/") for n in names)
    assert not any(n.startswith(("tests/", "src/")) for n in names)

    # -S: no site processing, so the checkout's editable install (.pth) cannot shadow the wheel; the
    # dependencies come from the virtual environment's site-packages, after the wheel.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(site), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    )
    result = run([sys.executable, "-S", "-c", SCRIPT], cwd=cwd, env=env)
    out = json.loads(result.stdout.strip().splitlines()[-1])

    installed = site / "pddlworlds"
    assert Path(out["file"]).parent == installed
    assert Path(out["domains_dir"]) == installed / "pddl_domains"
    assert Path(out["planners_dir"]) == installed / "planners"
    assert sorted(out["envs"]) == sorted(domains())
    for name, report in out["envs"].items():
        assert report["valid"] is True, name
        assert Path(report["domain_file"]).is_relative_to(installed), report
    assert [out["envs"][n]["problems"] for n in sorted(out["envs"])] == [
        len(domains()[n].problems(domains()[n].default_split)) for n in sorted(domains())
    ]
    assert out["make_env"] is True
    assert len(out["published"]) == 12 and set(out["published"].values()) == {60}
