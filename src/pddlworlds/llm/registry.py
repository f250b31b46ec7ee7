"""The table of model backends: name -> how to build one, parse its `--llm NAME:ARG`, run and describe it.

Like unified-planning's engine table, an entry names its factory as a lazily imported "module:attribute"
string, so listing the backends (the CLI's help) loads no model library. The CLI, the evaluation runner,
the run configuration and the report all read this table; a new backend is one module and one
`register_backend(Backend(...))` (or one entry below).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..registry import Registry, load_attribute
from .base import LLM

__all__ = [
    "BACKENDS",
    "NO_MODEL",
    "Backend",
    "BackendSpec",
    "get_backend",
    "llm_usage",
    "parse_llm",
    "register_backend",
]

#: `BackendSpec.kind` of a run whose agents need no model.
NO_MODEL = "none"


@dataclass(frozen=True)
class BackendSpec:
    """How to build the model in whichever process plays an episode (picklable; the key is never stored).

    `kind` is a `BACKENDS` name (or "none": no agent needs a model); `model` the ARG of `--llm NAME:ARG`
    (a GGUF path, a model name, ...); `base_url`, `api_key`, `request_timeout` and `call_deadline` for
    servers; `n_threads` for in-process models.
    """

    kind: str = NO_MODEL
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    n_threads: int | None = None
    request_timeout: float | None = None  # seconds per HTTP attempt (servers)
    call_deadline: float | None = None  # seconds per call, retries included (servers)
    # a llama.cpp LoRA adapter GGUF file (in-process models that take one); None: no adapter
    lora: str | None = None

    @property
    def backend(self) -> Backend | None:
        return None if self.kind == NO_MODEL else get_backend(self.kind)

    def build(self) -> LLM | None:
        backend = self.backend
        return None if backend is None else backend.build(self)

    def describe(self, llm: Any) -> dict[str, Any] | None:
        """The run configuration's `llm` entry: what identifies the model (never a key)."""
        backend = self.backend
        return None if backend is None else backend.describe(self, llm)


@dataclass(frozen=True)
class Backend:
    """One model backend. `factory(spec) -> LLM` ("module:attr" or a callable); `usage` and `help` feed the
    CLI; `processes`: each worker process loads its own model (else worker threads share one); then
    `default_workers` None means a process per core (at most 8). `describe(spec, llm) -> dict` is the
    config entry (default: `llm.describe()`), and `label(entry) -> str` how the report names it."""

    name: str
    factory: str | Callable[[BackendSpec], LLM]
    usage: str
    help: str
    arg_required: bool = False
    takes_base_url: bool = False
    takes_lora: bool = False  # accepts a LoRA adapter file (`--lora`)
    scores_candidates: bool = False  # its models are `CandidateScorer`s (`--decoding admissible`)
    processes: bool = False
    default_workers: int | None = 4
    label: str | Callable[[dict[str, Any]], str] | None = None

    def resolve(self, ref: str | Callable[..., Any]) -> Callable[..., Any]:
        if callable(ref):
            return ref
        return load_attribute(ref)  # type: ignore[return-value]

    def build(self, spec: BackendSpec) -> LLM:
        return self.resolve(self.factory)(spec)  # type: ignore[no-any-return]

    def describe(self, spec: BackendSpec, llm: Any) -> dict[str, Any]:
        described = getattr(llm, "describe", None)
        entry = dict(described()) if callable(described) else {"model": getattr(llm, "model_id", spec.model)}
        return {"backend": self.name, **entry}

    def describe_entry(self, entry: dict[str, Any]) -> str:
        """A stored config entry in words, for the report."""
        if self.label is None:
            return str(entry.get("model") or entry.get("model_id") or self.name)
        return str(self.resolve(self.label)(entry))


BACKENDS: Registry[Backend] = Registry("model backend", plural="backends", entries={
    "embedded": Backend(
        "embedded",
        "pddlworlds.llm.embedded:from_spec",
        usage="embedded, embedded:choice-vocab, embedded:full, embedded:PATH.gguf",
        help="the llama.cpp model in this process: Gemma 3 270M (choice-vocab: with its vocabulary cut to the "
             "worlds' tokens, what `eval` plays the shipped worlds' choosing settings on; full: every token), "
             "or a GGUF file",
        processes=True,
        default_workers=None,
        takes_lora=True,
        scores_candidates=True,
        label="pddlworlds.llm.embedded:label",
    ),
    "openai": Backend(
        "openai",
        "pddlworlds.llm.openai_compatible:from_spec",
        usage="openai:MODEL",
        help="MODEL at an OpenAI-compatible server (--base-url, --api-key)",
        arg_required=True,
        takes_base_url=True,
        label="pddlworlds.llm.openai_compatible:label",
    ),
})


def register_backend(backend: Backend) -> None:
    """Add a backend, e.g. from a plugin or a test (a taken name is refused)."""
    BACKENDS.register(backend.name, backend)


def get_backend(name: str) -> Backend:
    return BACKENDS[name]


def llm_usage() -> str:
    """The accepted `--llm` forms, from the table (for help texts and errors)."""
    return ", ".join(b.usage for b in BACKENDS.values())


def parse_llm(
    text: str,
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    request_timeout: float | None = None,
    call_deadline: float | None = None,
) -> BackendSpec:
    """`NAME` or `NAME:ARG` (e.g. `embedded`, `embedded:PATH.gguf`, `openai:MODEL`) as a `BackendSpec`."""
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    backend = BACKENDS.get(kind)
    if backend is None:
        raise ValueError(f"unknown --llm {text!r}; use one of: {llm_usage()}")
    if base_url and not backend.takes_base_url:
        servers = ", ".join(f"--llm {b.usage}" for b in BACKENDS.values() if b.takes_base_url)
        raise ValueError(f"--base-url is for {servers}, not the {kind} model")
    if backend.arg_required and not rest:
        raise ValueError(f"--llm {kind} needs an argument: --llm {backend.usage}")
    for name, value in (("--request-timeout", request_timeout), ("--call-deadline", call_deadline)):
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be a positive number of seconds, not {value}")
    if backend.takes_base_url:
        return BackendSpec(
            kind,
            model=rest,
            base_url=base_url,
            api_key=api_key,
            request_timeout=request_timeout,
            call_deadline=call_deadline,
        )
    return BackendSpec(kind, model=rest or None)
