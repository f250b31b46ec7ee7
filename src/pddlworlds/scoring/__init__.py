"""Scores of episode records, as pure functions: per-episode and aggregate metrics (`metrics`), paired
significance tests (`significance`), AgentBoard's own scores (`agentboard_scores`) and the scores of the
`impossible` claims (`unsolvable`). Nothing here reads or writes a run folder; `reports` does that."""
