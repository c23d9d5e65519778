"""The production backend: PostgreSQL (>= 16) with pgvector (>= 0.8)."""
