"""The embedded backend: SQLite (WAL, FTS5) and usearch files in one directory."""
