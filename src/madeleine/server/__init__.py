"""Madeleine over the network: the REST server (``app.py``), its API keys and tenants, and
the MCP server (``mcp.py``). Installed with the base package; started by ``madeleine serve``
and ``madeleine mcp``."""
