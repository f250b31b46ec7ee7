"""Stored artefacts the package reads and writes: the expert plans and optimal lengths (`plans`) and the
unsolvability proofs (`proofs`) under `planners/`."""
