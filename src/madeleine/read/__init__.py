"""Read path: query analysis, recall channels, fusion and context assembly. No LLM here."""
