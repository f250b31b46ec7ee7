"""Distil the planner's expert into the embedded model: data from the real agents, LoRA, GGUF adapter.

Modules: `problems` (training problems, never a shipped one), `teacher` (the scripted model the agents
talk to), `data` (recorded conversations), `packing` (token-trie sequences), `trainer` (LoRA fine-tuning
with torch/transformers/peft, the `train` extra), `gguf_adapter` (llama.cpp's LoRA format), `profile`
(the agents as trained: no in-context example), `cli` (`pddlworlds train`).
"""
