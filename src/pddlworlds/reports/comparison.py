"""Two runs side by side, episode by episode (`pddlworlds compare RUN_A RUN_B`): whether a change (a
setting, an adapter, a model) is more than chance on the same episodes.

An episode of one run is paired with the same episode of the other: the same agent, domain, split, problem
and seed (`artefacts.runs.episode_key`, what makes an episode one episode of a run), so a run compared with
itself finds no difference. Episodes stopped by a fault outside the agent are left out, as every score
leaves them out; episodes only one run holds are counted, never paired with another seed or problem. Per
`agent/domain`, `agent/level:<level>` (generated problems named `...-easy-NN`), `agent/all` and `all/all`:
each run's SR and PR, the episodes only one of them solves with McNemar's exact p-value (the discordant
pairs are a fair coin when both are equally good: scipy.stats.binomtest), and the Wilcoxon signed-rank
p-value of progress (scipy.stats.wilcoxon, two-sided, zero differences dropped).

Only runs played under the same conditions are paired (`CONDITIONS`): the step budget, the profile, the
setting (with its observation mode), and the domain files by content (the sha256 each run's configuration
records of `domain.pddl`, its text files and each problem, `evaluation.configuration.domain_files`), not by
the folder's name. Otherwise the comparison is refused in one line saying what differs; `across` names
conditions whose difference is the point of the comparison (`--across setting`: a new setting against the
old). Runs made before the files were recorded pair by name when both played the shipped domains.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..artefacts.runs import (
    EpisodeKey,
    EpisodeMeta,
    RunFolder,
    config_setting,
    episode_key,
    is_errored,
    read_run,
)
from ..printable import markdown_cell

__all__ = ["ACROSS", "CONDITIONS", "PairingError", "RunComparison", "compare_episodes", "compare_runs",
           "comparison_table", "problem_level"]

#: What two compared runs must have played alike, in the words a refusal names them by.
CONDITIONS = ("step budget", "profile", "setting", "domain files")
#: The conditions a comparison may be made across, on purpose (`compare_runs(across=...)`).
ACROSS = ("setting",)

#: The fields of an episode key, in order, as a comparison names them.
KEY_FIELDS = ("agent", "domain", "split", "problem", "seed")

_LEVEL_IN_NAME = re.compile(r"-(easy|medium|hard)-")


class PairingError(ValueError):
    """Two runs whose episodes cannot be paired; the message names the runs and why, in one line."""


def problem_level(problem: str) -> str | None:
    """The generator level in a generated problem's name (`pl9301-easy-01`: easy); None when it names none."""
    match = _LEVEL_IN_NAME.search(problem)
    return match.group(1) if match else None


@dataclass
class RunComparison:
    """Two runs paired episode by episode: the figures per group, and what could not be paired."""

    names: tuple[str, str]
    figures: dict[str, dict[str, Any]]
    unpaired: tuple[int, int] = (0, 0)  # scored episodes of A with no partner in B, and of B in A
    faulted: tuple[int, int] = (0, 0)  # episodes stopped by a fault outside the agent, left out
    sources: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    #: The conditions the runs were compared across on purpose (`compare_runs(across=...)`), in words.
    conditions: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """What was left out, one sentence each (none when every episode paired)."""
        a, b = self.names
        notes = []
        if any(self.unpaired):
            notes.append(
                f"unpaired episodes left out: {self.unpaired[0]} of {a} and {self.unpaired[1]} of {b} have no "
                f"partner (the same {', '.join(KEY_FIELDS)}) in the other run"
            )
        if any(self.faulted):
            notes.append(
                f"episodes stopped by a fault outside the agent left out: {self.faulted[0]} of {a}, "
                f"{self.faulted[1]} of {b}"
            )
        return notes + self.conditions

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": list(self.sources),
            "paired_by": list(KEY_FIELDS),
            "unpaired": {"a": self.unpaired[0], "b": self.unpaired[1]},
            "faulted": {"a": self.faulted[0], "b": self.faulted[1]},
            "across": self.conditions,
            "figures": self.figures,
        }


def _scored(lines: Iterable[Mapping[str, Any]], index: dict[EpisodeKey, Mapping[str, Any]], source: str,
            where: dict[EpisodeKey, str]) -> int:
    """Add the scored lines to `index` (keyed by episode); the faulted ones counted. A key already there
    (two folders read as one run holding the same episode) is refused."""
    faulted = 0
    for line in lines:
        if is_errored(line):
            faulted += 1
            continue
        key = episode_key(line)
        if key in index and where.get(key, source) == source:
            raise PairingError(f"{source} holds the episode {_key_words(key)} twice: which one to pair is not known")
        if key in index:
            raise PairingError(
                f"{source} and {where[key]} both hold the episode {_key_words(key)}: folders read as one run "
                "must hold different episodes"
            )
        index[key], where[key] = line, source
    return faulted


def _key_words(key: EpisodeKey) -> str:
    return ", ".join(f"{name} {value}" for name, value in zip(KEY_FIELDS, key))


def _values_words(values: set[Any]) -> str:
    shown = sorted(map(str, values))
    return ", ".join(shown[:5]) + (", ..." if len(shown) > 5 else "")


def _disjoint_words(a: Iterable[EpisodeKey], b: Iterable[EpisodeKey]) -> str:
    """The first key field whose values the two runs do not share, in words ("" when each field shares some)."""
    a, b = list(a), list(b)
    for i, name in enumerate(KEY_FIELDS):
        values_a, values_b = {k[i] for k in a}, {k[i] for k in b}
        if values_a and values_b and not values_a & values_b:
            return f"; no {name} in common ({_values_words(values_a)} against {_values_words(values_b)})"
    return ""


def _group_keys(line: Mapping[str, Any]) -> list[str]:
    level = problem_level(str(line["problem"]))
    keys = [f"{line['agent']}/{line['domain']}", f"{line['agent']}/all"]
    return [*keys, f"{line['agent']}/level:{level}", "all/all"] if level else [*keys, "all/all"]


def _figures(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any]:
    from scipy.stats import binomtest, wilcoxon

    only_a = sum(1 for a, b in pairs if a["success"] and not b["success"])
    only_b = sum(1 for a, b in pairs if b["success"] and not a["success"])
    pa, pb = [float(a["progress"]) for a, _ in pairs], [float(b["progress"]) for _, b in pairs]
    differing = sum(1 for x, y in zip(pa, pb) if x != y)
    pr_p = float(wilcoxon(pa, pb).pvalue) if differing else None
    return {
        "pairs": len(pairs),
        "sr_a": round(100.0 * sum(bool(a["success"]) for a, _ in pairs) / len(pairs), 1),
        "sr_b": round(100.0 * sum(bool(b["success"]) for _, b in pairs) / len(pairs), 1),
        "solved_only_a": only_a,
        "solved_only_b": only_b,
        # None: no discordant pair, nothing to test (the runs solve exactly the same episodes)
        "sr_p": float(binomtest(only_a, only_a + only_b, 0.5).pvalue) if only_a + only_b else None,
        "pr_a": round(100.0 * sum(pa) / len(pa), 1),
        "pr_b": round(100.0 * sum(pb) / len(pb), 1),
        "pr_differing": differing,
        "pr_p": None if pr_p is None or math.isnan(pr_p) else pr_p,
    }


def compare_episodes(
    lines_a: Iterable[Mapping[str, Any]],
    lines_b: Iterable[Mapping[str, Any]],
    names: tuple[str, str] = ("A", "B"),
) -> RunComparison:
    """Two runs' episode lines paired by episode (`KEY_FIELDS`); `PairingError` when an episode appears twice
    in one side or when no episode pairs."""
    index_a: dict[EpisodeKey, Mapping[str, Any]] = {}
    index_b: dict[EpisodeKey, Mapping[str, Any]] = {}
    faulted = (_scored(lines_a, index_a, names[0], {}), _scored(lines_b, index_b, names[1], {}))
    return _compare(index_a, index_b, names, faulted)


def _compare(index_a: Mapping[EpisodeKey, Mapping[str, Any]], index_b: Mapping[EpisodeKey, Mapping[str, Any]],
             names: tuple[str, str], faulted: tuple[int, int]) -> RunComparison:
    paired = [key for key in index_a if key in index_b]
    if not paired:
        raise PairingError(
            f"{names[0]} and {names[1]} have no episode in common (the same {', '.join(KEY_FIELDS)}): "
            f"{len(index_a)} scored episode(s) against {len(index_b)}{_disjoint_words(index_a, index_b)}"
        )
    groups: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for key in paired:
        a, b = index_a[key], index_b[key]
        for group in _group_keys(a):
            groups.setdefault(group, []).append((a, b))
    figures = {group: _figures(pairs) for group, pairs in sorted(groups.items())}
    unpaired = (len(index_a) - len(paired), len(index_b) - len(paired))
    return RunComparison(names, figures, unpaired, faulted)


def compare_runs(run: str | Path, others: Sequence[str | Path], across: Sequence[str] = ()) -> RunComparison:
    """Run folder `run` against `others` read as one run (`artefacts.runs.read_run`, gzipped episodes
    included); `RunFolderError` for a folder that cannot be read, `PairingError` for runs that cannot be
    paired, or that were not played under the same conditions (`CONDITIONS`, but those named in `across`)."""
    if not others:
        raise ValueError("compare needs a second run folder")
    if unknown := [c for c in across if c not in ACROSS]:
        raise ValueError(f"--across {unknown[0]!r}: a comparison may be made across {', '.join(ACROSS)} only; "
                         f"the other conditions ({', '.join(c for c in CONDITIONS if c not in ACROSS)}) must match")
    given = [Path(f).resolve() for f in others]
    if twice := next((f for i, f in enumerate(others) if given[i] in given[:i]), None):
        raise PairingError(f"{twice} is given twice as run B: each episode would be paired twice")
    first = read_run(run)
    index_a: dict[EpisodeKey, Mapping[str, Any]] = {}
    faulted_a = _scored(first.lines, index_a, str(run), {})
    index_b: dict[EpisodeKey, Mapping[str, Any]] = {}
    where: dict[EpisodeKey, str] = {}
    faulted_b = 0
    seconds = [read_run(folder) for folder in others]
    for folder, second in zip(others, seconds):
        faulted_b += _scored(second.lines, index_b, str(folder), where)
    names = (Path(run).name or str(run), "+".join(Path(f).name or str(f) for f in others))
    comparison = _compare(index_a, index_b, names, (faulted_a, faulted_b))
    paired = [key for key in index_a if key in index_b]
    for folder, second in zip(others, seconds):
        mine = [key for key in paired if where[key] == str(folder)]
        comparison.conditions.extend(_same_conditions(first, second, mine, set(across)))
    comparison.sources = ([str(run)], [str(f) for f in others])
    return comparison


def _conditions(run: RunFolder) -> dict[str, Any]:
    """The conditions a run was played under, from its configuration (its episodes' step budget where a
    folder has none)."""
    config = run.config
    budgets = {EpisodeMeta.of(line).max_steps for line in run.lines} - {None}
    steps = config.get("max_steps") or (budgets.pop() if len(budgets) == 1 else None)
    setting = config_setting(config)
    if config.get("observation_mode"):
        setting += f" ({config['observation_mode']} observations)"
    return {"step budget": steps, "profile": config.get("profile", "pddlworlds"), "setting": setting}


def _files_words(a: RunFolder, b: RunFolder, keys: Sequence[EpisodeKey]) -> str | None:
    """Why the paired episodes' domain files may differ between `a` and `b`, in words; None when they match."""
    files_a, files_b = a.config.get("domain_files"), b.config.get("domain_files")
    if files_a is None or files_b is None:
        roots = (a.config.get("domains_root"), b.config.get("domains_root"))
        if roots == (None, None):
            return None  # both the shipped domains, made before the files were recorded: by name
        unrecorded = a.path if files_a is None else b.path
        return (f"the domain files of {unrecorded} are not recorded (a run made before they were) and a run played "
                f"a folder of its own ({next(r for r in roots if r)}): whether the files are the same is not known")
    for domain in sorted({key[1] for key in keys}):
        one, other = files_a.get(domain) or {}, files_b.get(domain) or {}
        for part in ("domain", "text"):
            if one.get(part) != other.get(part):
                what = "domain.pddl" if part == "domain" else "text files"
                return f"{domain}'s {what} differ by content"
        for problem in sorted({key[3] for key in keys if key[1] == domain}):
            if (one.get("problems") or {}).get(problem) != (other.get("problems") or {}).get(problem):
                return f"{domain}'s problem {problem} differs by content"
    return None


def _same_conditions(a: RunFolder, b: RunFolder, keys: Sequence[EpisodeKey], across: set[str]) -> list[str]:
    """`PairingError` naming what differs between the conditions of `a` and `b` (those in `across` aside,
    which come back as notes saying what differs)."""
    mine, theirs = _conditions(a), _conditions(b)
    differ = [f"{name} {mine[name]} against {theirs[name]}" for name in mine if mine[name] != theirs[name]]
    files = _files_words(a, b, keys)
    if files is not None:
        differ.append(files)
    refused = [d for d in differ if not any(d.startswith(name) for name in across)]
    if refused:
        hint = "; --across setting pairs runs of different settings" if any(d.startswith("setting") for d in refused) else ""
        raise PairingError(f"{a.path} and {b.path} were not played under the same conditions: {'; '.join(refused)} "
                           f"(only episodes played alike are paired{hint})")
    return [f"played across {d}" for d in differ]


def _p(value: float | None) -> str:
    return "none differ" if value is None else f"{value:.3g}"


def comparison_table(comparison: RunComparison) -> str:
    """The figures as a markdown table, one row per group (names from the folders: shown inert)."""
    a, b = (markdown_cell(name) for name in comparison.names)
    lines = [
        (f"| agent/domain | pairs | SR % {a} | SR % {b} | only {a} | only {b} | McNemar p | PR % {a} | PR % {b} "
         "| Wilcoxon p |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, f in comparison.figures.items():
        lines.append(
            f"| {markdown_cell(key)} | {f['pairs']} | {f['sr_a']} | {f['sr_b']} | {f['solved_only_a']} | "
            f"{f['solved_only_b']} | {_p(f['sr_p'])} | {f['pr_a']} | {f['pr_b']} | {_p(f['pr_p'])} |"
        )
    return "\n".join(lines)
