"""Storage: the ``Store`` protocol and its embedded SQLite implementation."""
