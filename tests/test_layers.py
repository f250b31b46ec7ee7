"""The package's shape: the import-linter layers contracts in pyproject.toml hold, no import circles, and no
private name (leading underscore) imported from another module."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "pddlworlds"
#: None known: a circle or a private import anywhere fails the test.
KNOWN_CIRCLES: set[frozenset[str]] = set()
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str]] = set()


def lint_imports() -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [exe, "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_layers_contracts_are_kept() -> None:
    result = lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and "pddlworlds layers KEPT" in result.stdout


def test_no_import_circles() -> None:
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("pddlworlds")  # imports for annotations count too
    circles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if graph.chain_exists(importer=imported, imported=module):
                circles.add(frozenset({module, imported}))
    assert circles <= KNOWN_CIRCLES, sorted(map(sorted, circles - KNOWN_CIRCLES))


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_private_name_imported_across_modules() -> None:
    found = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.add((module_name(path), alias.name))
    assert found <= KNOWN_PRIVATE_IMPORTS, sorted(found - KNOWN_PRIVATE_IMPORTS)


def test_no_module_is_over_450_lines() -> None:
    """One job per module: a module past 450 lines is doing two."""
    long = {
        module_name(path): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert long == {}


def test_test_folders_mirror_the_package_and_test_names_are_unique() -> None:
    """tests/<name>/ holds the tests of `pddlworlds.<name>` (a package or a module); the whole-package tests,
    conftest.py and fixtures/ stay at the root. pytest imports a test file by its base name (no __init__.py),
    so two test files of one name in different folders would clash: none may."""
    tests = REPO / "tests"
    folders = sorted(p.name for p in tests.iterdir() if p.is_dir() and p.name not in ("fixtures", "__pycache__"))
    assert [f for f in folders if not (SRC / f).is_dir() and not (SRC / f"{f}.py").is_file()] == []
    names = [p.name for p in tests.rglob("test_*.py") if "fixtures" not in p.relative_to(tests).parts]
    assert sorted({n for n in names if names.count(n) > 1}) == []
