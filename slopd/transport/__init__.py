"""The network transports (SPEC §12, §13): the HTTP app and the MCP server, and what they share."""
