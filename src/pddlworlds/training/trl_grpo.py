"""A GRPO run with TRL on pddlworlds: the embedded Gemma 3 270M, a LoRA adapter, our environment's reward.

    python scripts/trl_grpo_example.py --steps 2          # or grpo_example(out_dir, steps=2) from Python

The model is the one `pddlworlds train` fine-tunes (`training.trainer.load_base_model`: the embedded GGUF,
dequantised by transformers into a float32 copy that is cached); TRL trains a LoRA adapter on it with
`GRPOTrainer(environment_factory=PDDLWorldsToolEnv)`, each prompt a problem (a dataset row naming it),
each rollout an episode whose tools are `act` and `check_valid_actions`, and whose reward is the
environment's `get_reward()`. The pretrained GGUF has no chat template, let alone one for tools, so the
tokenizer gets `TOOL_CHAT_TEMPLATE` (Gemma's turns; tool calls as `<tool_call>{json}</tool_call>`, tool
results in a user turn) and `RESPONSE_TEMPLATE`, which transformers' `parse_response` reads tool calls with.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..frameworks import missing_extra
from ..frameworks.trl_env import PDDLWorldsToolEnv

__all__ = ["RESPONSE_TEMPLATE", "TOOL_CHAT_TEMPLATE", "GRPOReport", "grpo_example", "tool_tokenizer"]

#: Gemma's turn markers, with tools: the tool list in a first system turn, assistant tool calls as
#: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, tool results as a user turn. Rendering is
#: prefix-preserving (a message renders the same whatever follows), which TRL's tool loop needs.
TOOL_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if tools %}<start_of_turn>system{{ '\\n' }}You can call these tools; write each call as "
    "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>."
    "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}<end_of_turn>{{ '\\n' }}{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'assistant' %}<start_of_turn>model{{ '\\n' }}{{ message.content or '' }}"
    "{% for call in message.tool_calls or [] %}<tool_call>"
    "{{ {'name': call.function.name, 'arguments': call.function.arguments} | tojson }}</tool_call>"
    "{% endfor %}<end_of_turn>{{ '\\n' }}"
    "{% elif message.role == 'tool' %}<start_of_turn>user{{ '\\n' }}<tool_response>{{ message.content }}"
    "</tool_response><end_of_turn>{{ '\\n' }}"
    "{% else %}<start_of_turn>{{ message.role }}{{ '\\n' }}{{ message.content }}<end_of_turn>{{ '\\n' }}"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model{{ '\\n' }}{% endif %}"
)

#: How transformers' `parse_response` reads a reply written in `TOOL_CHAT_TEMPLATE`'s format.
RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<start_of_turn>model\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<end_of_turn>\s*", "content": "text"},
    },
}


def tool_tokenizer(tokenizer: Any) -> Any:
    """`tokenizer` with the tool-calling chat template and response template set (returned for chaining)."""
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    tokenizer.response_template = RESPONSE_TEMPLATE
    return tokenizer


@dataclass
class GRPOReport:
    """What a run did: seconds per optimisation step, the reward TRL logged per step (the mean over the
    step's rollouts), the last step's rollouts' own `get_reward()`, and TRL's log."""

    seconds_per_step: list[float]
    logged_rewards: list[float]
    last_env_rewards: list[float]
    problems: list[str]
    log_history: list[dict[str, Any]] = field(default_factory=list)


def grpo_example(
    out_dir: str | Path,
    *,
    steps: int = 1,
    problems: tuple[str, ...] = ("problem1", "problem5"),
    domain: str = "blocksworld",
    generations: int = 2,
    max_completion_length: int = 32,
    max_tool_calls: int = 2,
    max_steps: int = 5,
    seed: int = 0,
    threads: int | None = None,
    base_model: str | Path | None = None,
) -> GRPOReport:
    """`steps` GRPO steps on `problems` of `domain` (one prompt each, `generations` rollouts per prompt,
    episodes of at most `max_steps` steps), on the CPU; TRL writes its output under `out_dir`. `base_model`:
    the GGUF to load (`load_base_model`; default the embedded model)."""
    try:
        import peft
        import torch
        from datasets import Dataset
        from transformers import TrainerCallback
        from trl import GRPOConfig, GRPOTrainer
    except ImportError as exc:
        raise missing_extra("trl", exc) from exc
    from .trainer import load_base_model

    if threads is not None:
        torch.set_num_threads(threads)
    model, tokenizer, _ = load_base_model(base_model)
    model.set_attn_implementation("sdpa")  # generation and GRPO's forward passes take plain masks
    tool_tokenizer(tokenizer)
    rows = {
        "prompt": [[{"role": "user", "content": ""}] for _ in problems],
        "domain": [domain] * len(problems),
        "problem": list(problems),
        "max_steps": [max_steps] * len(problems),
    }
    batch = len(problems) * generations
    args = GRPOConfig(
        output_dir=str(out_dir), max_steps=steps, per_device_train_batch_size=batch, num_generations=generations,
        max_completion_length=max_completion_length, max_tool_calling_iterations=max_tool_calls,
        learning_rate=1e-4, logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, bf16=False,
        seed=seed, shuffle_dataset=False, disable_tqdm=True, gradient_checkpointing=False,
    )
    lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")

    clock: dict[str, float] = {}
    seconds: list[float] = []

    class StepClock(TrainerCallback):  # type: ignore[misc]
        """Wall time of each optimisation step (generation, rewards, loss, update)."""

        def on_step_begin(self, *_: Any, **__: Any) -> None:
            clock["start"] = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            seconds.append(time.perf_counter() - clock["start"])

    trainer = GRPOTrainer(
        model=model, args=args, processing_class=tokenizer, train_dataset=Dataset.from_dict(rows),
        environment_factory=PDDLWorldsToolEnv, peft_config=lora, callbacks=[StepClock()],
    )
    trainer.train()
    key = f"rewards/{PDDLWorldsToolEnv.__name__}/mean"
    logged = [float(entry[key]) for entry in trainer.state.log_history if key in entry]
    return GRPOReport(
        seconds_per_step=seconds,
        logged_rewards=logged,
        last_env_rewards=[env.get_reward() for env in trainer.environments],
        problems=[env.info["problem"] for env in trainer.environments],
        log_history=list(trainer.state.log_history),
    )
