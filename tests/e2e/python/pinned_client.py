"""A client nobody here wrote: the official Python SDK (mcp 2.3.0), pinned to 2026-07-28.

Usage: pinned_client.py http URL | pinned_client.py stdio COMMAND [ARG...]
Prints one JSON line: the negotiated version, the tool names, and two tool results.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    kind, rest = sys.argv[1], sys.argv[2:]
    server = rest[0] if kind == "http" else StdioServerParameters(command=rest[0], args=rest[1:], env=dict(os.environ))
    async with Client(server, mode="2026-07-28") as client:
        tools = await client.list_tools()
        made = await client.call_tool("createTask", {"sessionId": "python", "name": "From Python"})
        listed = await client.call_tool("listTasks", {"sessionId": "python"})
        missing = await client.call_tool("getTask", {"sessionId": "python", "id": "nope"})
        print(
            json.dumps(
                {
                    "version": client.protocol_version,
                    "tools": [tool.name for tool in tools.tools],
                    "made": made.structured_content,
                    "listed": listed.structured_content,
                    "missing": {"is_error": missing.is_error, "structured": missing.structured_content},
                }
            )
        )


asyncio.run(main())
