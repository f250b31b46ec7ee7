"""What defines and runs a world: PDDL reading, grounding, the text a player reads, the world's state and
rules, the shipped domain catalogue and the profiles (our own text, AgentBoard's) that choose a world's
wording and rules."""
