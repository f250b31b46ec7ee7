"""The registry type every extension point uses: duplicates refused, lazy entries, close-name hints."""

from __future__ import annotations

import pytest

from pddlworlds.agents import AGENTS
from pddlworlds.llm import BACKENDS
from pddlworlds.planning import PLANNERS
from pddlworlds.registry import Registry, UnknownNameError
from pddlworlds.worlds.profiles import PROFILES


def test_a_taken_name_is_refused_and_remove_frees_it() -> None:
    registry = Registry("colour", {"red": 1})
    with pytest.raises(ValueError, match="colour 'red' is already registered"):
        registry.register("red", 2)
    registry.remove("red")
    registry["red"] = 3
    assert dict(registry) == {"red": 3}


def test_a_lazy_entry_is_imported_on_first_lookup() -> None:
    registry = Registry("function", {"sqrt": "math:sqrt", "join": "os.path:join"})
    import math

    assert registry["sqrt"] is math.sqrt and list(registry) == ["sqrt", "join"]
    with pytest.raises(ValueError, match="cannot load 'nosuch.module:x'"):
        Registry("thing", {"x": "nosuch.module:x"})["x"]


def test_an_unknown_name_lists_the_names_and_the_closest() -> None:
    registry = Registry("planner", {"fd-opt": 1, "fd-sat": 2})
    with pytest.raises(UnknownNameError) as caught:
        registry["fd-op"]
    assert str(caught.value) == "unknown planner 'fd-op' (did you mean 'fd-opt'?); planners: fd-opt, fd-sat"
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, ValueError)
    assert registry.get("nothing") is None


@pytest.mark.parametrize("registry", [AGENTS, BACKENDS, PLANNERS, PROFILES])
def test_the_package_registries_are_registries(registry: Registry) -> None:
    assert isinstance(registry, Registry) and len(registry) >= 2
    with pytest.raises(ValueError, match="already registered"):
        registry.register(next(iter(registry)), None)
