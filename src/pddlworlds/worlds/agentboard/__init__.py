"""The AgentBoard profile: AgentBoard's own wording of the four domains (`text`) and the world that plays
by its messages, parsing and progress rule (`world`)."""
