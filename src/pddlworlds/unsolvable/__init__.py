"""Unsolvable problems: the `impossible` action by which an agent claims that no plan exists (`claim`). The
unsolvable variants of shipped problems, each kept only with a proof, are drawn by `generators.unsolvable`."""
