"""Text processing: analyzers for lexical search, token counting, time parsing."""
