"""What the scripts that drive the Python SDK client share (`py_host.py`, a
host of `mcpc serve`; `xtask/bench/sdks/py_client.py`, timed by
`sdk-bench`): their command line, the server to connect to, the client mode
of an era, the check of the era negotiated and a bounded close.

The eras: `handshake` is `mode="legacy"` (the `initialize` handshake);
`stateless` is `mode="auto"` (one `server/discover`, which must pick
2026-07-28).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ERAS = ["handshake", "stateless"]


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A parser that knows `--era` and `--url`; the script adds its own."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--era", choices=ERAS, required=True)
    p.add_argument("--url", help="a server serving Streamable HTTP at this URL")
    return p


def parse(p: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`argv` parsed, the words after `--` as `command` (the server to
    spawn): exactly one of `--url` and a command."""
    command: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1 :]
    args = p.parse_args(argv)
    args.command = command
    if (args.url is None) == (not command):
        p.error("give either -- <command> or --url")
    return args


def server(args: argparse.Namespace) -> Any:
    """What `Client` connects to: the URL, or the command over stdio."""
    if args.url is not None:
        return args.url
    return StdioServerParameters(command=args.command[0], args=args.command[1:])


def mode(era: str) -> str:
    """The client mode of an era."""
    return "legacy" if era == "handshake" else "auto"


def negotiated_in(client: Client, era: str) -> str:
    """The revision negotiated; raises unless it is the era's."""
    version = client.protocol_version
    if (version == "2026-07-28") != (era == "stateless"):
        raise AssertionError(f"negotiated {version} for the {era} era")
    return version


async def close(client: Client, timeout: float, name: str) -> None:
    """Closes the client within `timeout` seconds; a failure only warns."""
    try:
        async with asyncio.timeout(timeout):
            await client.__aexit__(None, None, None)
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        print(f"{name}: close: {type(e).__name__}: {e}", file=sys.stderr)
