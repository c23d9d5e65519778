"""The memory lifecycle: strength and reinforcement, importance, forgetting,
consolidation and timelines."""
