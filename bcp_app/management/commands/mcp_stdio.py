"""`python manage.py mcp_stdio`: the same MCP tools as `/bcp/mcp`, over stdin/stdout for desktop agents.

The caller is whoever runs the process, so the platform identity comes from the operator:
`--api-key` (or `BCP_MCP_API_KEY`) acts as `Authorization: Bearer …`, `--language` as Accept-Language.
Logs go to stderr; stdout carries only JSON-RPC.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandParser
from mcp.server.stdio import stdio_server

from bcp_app.transports.mcp.server import build_server


class Command(BaseCommand):
    help = "Serve the shop's MCP tools (BCP + typed catalogue) over stdio."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--api-key",
            default=os.environ.get("BCP_MCP_API_KEY", ""),
            help="API key of the BCP platform this process acts for (default: $BCP_MCP_API_KEY).",
        )
        parser.add_argument("--language", default="pt-BR", help="Language of messages: pt-BR (default) or en.")

    def handle(self, *args: Any, **options: Any) -> None:

        headers = {"accept-language": options["language"]}
        if options["api_key"]:
            headers["authorization"] = f"Bearer {options['api_key']}"
        server = build_server(stdio_headers=headers)
        server.note_store_name()  # initialize names the store as "Dados da loja" says (read here: no loop yet)

        async def serve() -> None:

            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
