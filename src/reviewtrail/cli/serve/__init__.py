"""Server commands: the read-only inspector (``reviewtrail serve``), the public proxy in front of it
(``reviewtrail proxy``) and the MCP server for agents (``reviewtrail mcp``)."""
