"""Short-term memory beside the long-term store: a conversation buffer per session with a
token-budgeted window and a rolling summary (``session.py``), and a persisted agent state
machine (``agent.py``)."""
