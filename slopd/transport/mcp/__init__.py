"""The MCP server (SPEC §13): a hub's seat as tools, on stdio or mounted at `/mcp`."""
