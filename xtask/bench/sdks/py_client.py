"""The Python SDK client (PyPI `mcp`, pinned in `xtask/interop/requirements.txt`)
timed the way `sdk-bench` times ours: connect, warm up, then either
sequential `tools/call echo` (latency of each) or calls kept `--depth` in
flight (calls per second).

Usage: python py_client.py --era handshake|stateless --calls N --warm W --depth D \\
           (--url <http://...> | -- <command> [args...])

The era: `handshake` is `mode="legacy"` (the `initialize` handshake);
`stateless` is `mode="auto"` (one `server/discover`, which must pick
2026-07-28, as ours and the TypeScript client do). `--depth 1` is the
sequential phase. Prints one JSON line on stdout: {"sdk", "python",
"negotiated", "depth", "calls", "p50_us", "p99_us", "calls_per_s",
"cpu_us_per_call"}; exits 1 on any failure (a wrong echo included), 2 on
a usage error. Every request has a deadline. It imports `py_common`
from `xtask/interop/`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import mcp_types as types
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "interop"))
import py_common  # noqa: E402  (found through the path above)

# Each request's deadline, and the connection's.
TIMEOUT_S = 20.0
# The echoed message: the one `sdk-bench` sends for ours.
MESSAGE = "the quick brown fox jumps over the lazy dog"

warnings.simplefilter("ignore")


async def call(client: Client) -> None:
    result = await client.call_tool("echo", {"message": MESSAGE})
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    if result.is_error or MESSAGE not in text:
        raise AssertionError(f"echo gave {str(result)[:300]}")


async def run(client: Client, n: int, depth: int, lat: list[float] | None) -> int:
    """`n` calls, `depth` of them in flight; the latency of each when `lat` is given."""
    per_worker = n // depth

    async def worker() -> None:
        for _ in range(per_worker):
            start = time.perf_counter_ns()
            await call(client)
            if lat is not None:
                lat.append((time.perf_counter_ns() - start) / 1000)

    async with asyncio.timeout(TIMEOUT_S + n * 0.01):
        await asyncio.gather(*(worker() for _ in range(depth)))
    return per_worker * depth


def quantile(ordered: list[float], q: float) -> float:
    """The q-quantile by nearest rank."""
    if not ordered:
        return 0.0
    rank = min(len(ordered), max(1, -(-len(ordered) * q // 1)))
    return ordered[int(rank) - 1]


async def main(args: argparse.Namespace) -> None:
    client = Client(
        py_common.server(args), mode=py_common.mode(args.era), read_timeout_seconds=TIMEOUT_S
    )
    async with asyncio.timeout(TIMEOUT_S):
        await client.__aenter__()
    try:
        negotiated = py_common.negotiated_in(client, args.era)
        if args.warm > 0:
            await run(client, args.warm, min(args.depth, args.warm), None)
        lat: list[float] | None = [] if args.depth == 1 else None
        cpu0 = time.process_time()
        start = time.perf_counter()
        done = await run(client, args.calls, args.depth, lat)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu0
        if lat is not None:
            lat.sort()
        line = {
            "sdk": "python",
            "python": platform.python_version(),
            "negotiated": negotiated,
            "depth": args.depth,
            "calls": done,
            "p50_us": quantile(lat, 0.5) if lat is not None else None,
            "p99_us": quantile(lat, 0.99) if lat is not None else None,
            "calls_per_s": done / seconds,
            "cpu_us_per_call": cpu * 1e6 / done,
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    finally:
        # Closing is not measured; a slow close only warns.
        await py_common.close(client, 5, "py-client")


def parse() -> argparse.Namespace:
    parser = py_common.parser("py_client.py", "the Python SDK client timed as sdk-bench times ours")
    parser.add_argument("--calls", type=int, required=True)
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--depth", type=int, default=1)
    args = py_common.parse(parser, sys.argv[1:])
    if not (1 <= args.depth <= args.calls <= 10_000_000) or args.warm < 0:
        parser.error("--depth must be at least 1 and at most --calls")
    return args


if __name__ == "__main__":
    try:
        asyncio.run(main(parse()))
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        print(f"py-client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
