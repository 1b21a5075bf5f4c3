"""A host written with the official Python SDK client (PyPI `mcp`), driving
`mcpc serve` the way an application nobody here wrote would: every method
the SDK offers, against the upstream server the bridge serves, in the era
asked for.

Usage: python py_host.py --era handshake|stateless --upstream everything|ts-server \\
           -- <command> [args...]        (the bridge, spawned over stdio)
       python py_host.py --era ... --upstream ... --url <http://...>
                                         (a bridge already serving Streamable HTTP)

The era: `handshake` is `mode="legacy"` (the `initialize` handshake);
`stateless` is `mode="auto"` (a `server/discover` probe, which must pick
2026-07-28: the check `connect` fails otherwise).

Prints one JSON line per check on stdout, {"check", "ok", "detail"}, and
exits 1 when any check failed (2 on a usage error). The bridge's stderr goes
to this process's stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
import py_common
from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

# Each request's deadline; a check never waits longer.
TIMEOUT_S = 20.0
# How long a notification the upstream announces may take to arrive.
NOTIFY_S = 15.0
# What the host answers to the upstream's questions.
MODEL = "py-host-model"
ROOT = "file:///interop/py-host-root"

# The deprecated methods (ping, logging/setLevel, resources/subscribe) are
# exercised on purpose, in the era that has them.
warnings.simplefilter("ignore")

failed = 0


def report(check: str, ok: bool, detail: Any) -> None:
    global failed
    if not ok:
        failed += 1
    line = {"check": check, "ok": ok, "detail": str(detail)[:500]}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def check(name: str, fn: Callable[[], Awaitable[Any]]) -> None:
    """Runs one check: `fn` returns a detail (ok) or raises (failed)."""
    try:
        async with asyncio.timeout(TIMEOUT_S + NOTIFY_S):
            detail = await fn()
        report(name, True, detail if detail is not None else "")
    except BaseException as e:  # every failure is a check's verdict, a timeout included
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        report(name, False, f"{type(e).__name__}: {e}")


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


class Notes:
    """The notifications seen, and waits for one."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.changed = asyncio.Event()

    def push(self, n: Any) -> None:
        self.seen.append(n)
        self.changed.set()

    async def wait(self, pick: Callable[[Any], bool], what: str) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + NOTIFY_S
        while True:
            for n in self.seen:
                if pick(n):
                    return n
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no {what} within {NOTIFY_S} s")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass


notes = Notes()


def method_of(n: Any) -> str | None:
    return getattr(getattr(n, "root", n), "method", None)


def params_of(n: Any) -> Any:
    return getattr(getattr(n, "root", n), "params", None)


async def on_sampling(_ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    last = params.messages[-1].content if params.messages else None
    asked = getattr(last, "text", "") or ""
    return types.CreateMessageResult(
        role="assistant",
        model=MODEL,
        content=types.TextContent(type="text", text=f"sampled ({len(asked)} chars asked)"),
    )


async def on_elicitation(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content: dict[str, Any] = {}
    for key, prop in props.items():
        if (
            prop.get("type") == "string"
            and "format" not in prop
            and "enum" not in prop
            and "oneOf" not in prop
        ):
            content[key] = "Ada"
    return types.ElicitResult(action="accept", content=content)


async def on_roots(_ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=ROOT, name="py-host root")])


async def on_message(message: Any) -> None:
    if not isinstance(message, Exception):
        notes.push(message)


async def on_log(params: types.LoggingMessageNotificationParams) -> None:
    notes.push(types.LoggingMessageNotification(params=params))


async def run(args: argparse.Namespace) -> None:
    client = Client(
        py_common.server(args),
        mode=py_common.mode(args.era),
        read_timeout_seconds=TIMEOUT_S,
        sampling_callback=on_sampling,
        elicitation_callback=on_elicitation,
        list_roots_callback=on_roots,
        logging_callback=on_log,
        message_handler=on_message,
    )
    handshake = args.era == "handshake"
    try:
        async with asyncio.timeout(TIMEOUT_S):
            await client.__aenter__()
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        report("connect", False, f"{type(e).__name__}: {e}")
        return
    try:

        async def connected() -> str:
            version = py_common.negotiated_in(client, args.era)
            name = client.server_info.name if client.server_info else None
            return f"{version} with {name}"

        await check("connect", connected)
        if failed:
            return
        if handshake:

            async def ping() -> None:
                await client.send_ping()

            await check("ping", ping)
        await listed_and_echoed(client, args.upstream)
        if args.upstream == "everything":
            await everything(client, handshake)
        else:
            await ts_server(client, handshake)
    finally:
        await py_common.close(client, TIMEOUT_S, "py-host")


# The tools each upstream lists, of those the checks use.
LISTED = {
    "everything": [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ],
    "ts-server": ["echo", "add", "greet", "ask-model", "list-roots", "interview", "touch-tools"],
}


async def listed_and_echoed(client: Client, upstream: str) -> None:
    """The checks of every upstream: its tools listed, `echo` called."""

    async def tools_list() -> str:
        tools = (await client.list_tools()).tools
        names = [t.name for t in tools]
        for want in LISTED[upstream]:
            expect(want in names, f"{want} missing from {names}")
        return f"{len(tools)} tools"

    await check("tools/list", tools_list)

    async def tools_call() -> None:
        r = await client.call_tool("echo", {"message": "hi"})
        expect(text(r) == "Echo: hi", f"echo gave {r}")

    await check("tools/call", tools_call)


async def everything(client: Client, handshake: bool) -> None:
    async def structured() -> None:
        r = await client.call_tool("get-structured-content", {"location": "Chicago"})
        expect((r.structured_content or {}).get("temperature") == 36, f"got {r.structured_content}")

    await check("tools/call:structured", structured)

    async def progress() -> str:
        seen: list[float] = []

        async def on_progress(p: float, _total: float | None, _message: str | None) -> None:
            seen.append(p)

        r = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            progress_callback=on_progress,
        )
        expect("completed" in text(r), f"got {text(r)}")
        # In the stateless era both SDKs may let the result overtake the
        # last progress (sent before it): the first two must arrive.
        whole = len(seen) == 3 and seen[2] == 3
        expect(seen[:2] == [1, 2] and (whole or not handshake), f"progress seen: {seen}")
        return f"progress {seen}"

    await check("tools/call:progress", progress)

    async def sampling() -> None:
        r = await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 10})
        expect(MODEL in text(r), f"got {text(r)}")

    await check("sampling", sampling)

    async def elicitation() -> None:
        r = await client.call_tool("trigger-elicitation-request", {})
        expect("Name: Ada" in text(r), f"got {text(r)}")

    await check("elicitation", elicitation)

    async def roots() -> None:
        r = await client.call_tool("get-roots-list", {})
        expect(ROOT in text(r), f"got {text(r)}")

    await check("roots", roots)

    first: list[str] = []

    async def resources_list() -> str:
        resources = (await client.list_resources()).resources
        expect(len(resources) > 0, "no resources")
        first.append(str(resources[0].uri))
        return f"{len(resources)} resources"

    await check("resources/list", resources_list)

    async def resources_read() -> None:
        expect(bool(first), "no resource listed")
        r = await client.read_resource(first[0])
        expect(len(r.contents) > 0 and str(r.contents[0].uri) == first[0], f"got {r}")

    await check("resources/read", resources_read)

    async def templates() -> None:
        ts = (await client.list_resource_templates()).resource_templates
        uris = [t.uri_template for t in ts]
        expect("demo://resource/dynamic/text/{resourceId}" in uris, f"templates: {uris}")

    await check("resources/templates/list", templates)

    async def read_template() -> None:
        r = await client.read_resource("demo://resource/dynamic/text/7")
        expect("7" in r.model_dump_json(), f"got {r}")

    await check("resources/read:template", read_template)

    async def prompts_list() -> None:
        names = [p.name for p in (await client.list_prompts()).prompts]
        for want in ["simple-prompt", "args-prompt", "completable-prompt"]:
            expect(want in names, f"{want} missing from {names}")

    await check("prompts/list", prompts_list)

    async def prompts_get() -> None:
        r = await client.get_prompt("args-prompt", {"city": "Paris"})
        expect("What's weather in Paris?" in r.model_dump_json(), f"got {r}")

    await check("prompts/get", prompts_get)

    async def complete_prompt() -> None:
        r = await client.complete(
            types.PromptReference(type="ref/prompt", name="completable-prompt"),
            {"name": "department", "value": "En"},
        )
        expect(r.completion.values == ["Engineering"], f"got {r}")

    await check("completion/complete:prompt", complete_prompt)

    async def complete_resource() -> None:
        r = await client.complete(
            types.ResourceTemplateReference(
                type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}"
            ),
            {"name": "resourceId", "value": "3"},
        )
        expect(r.completion.values == ["3"], f"got {r}")

    await check("completion/complete:resource", complete_resource)

    watched = "demo://resource/dynamic/text/1"
    if handshake:

        async def set_level() -> str:
            await client.set_logging_level("debug")
            await client.call_tool("toggle-simulated-logging", {})
            n = await notes.wait(lambda n: method_of(n) == "notifications/message", "log message")
            return f"a {params_of(n).level} message"

        await check("logging/setLevel", set_level)

        async def subscribe() -> None:
            await client.subscribe_resource(watched)
            await client.call_tool("toggle-subscriber-updates", {})
            await notes.wait(
                lambda n: method_of(n) == "notifications/resources/updated"
                and str(params_of(n).uri) == watched,
                "resource update",
            )
            await client.unsubscribe_resource(watched)

        await check("resources/subscribe", subscribe)
    else:

        async def listen() -> None:
            async with client.listen(resource_subscriptions=[watched]) as sub:
                honored = sub.honored.resource_subscriptions or []
                expect(watched in honored, f"honored {sub.honored}")
                await client.call_tool("toggle-subscriber-updates", {})
                async with asyncio.timeout(NOTIFY_S):
                    async for event in sub:
                        if isinstance(event, ResourceUpdated) and event.uri == watched:
                            return

        await check("subscriptions/listen", listen)


async def ts_server(client: Client, handshake: bool) -> None:
    async def structured() -> None:
        r = await client.call_tool("add", {"a": 2, "b": 3})
        expect((r.structured_content or {}).get("sum") == 5, f"got {r}")

    await check("tools/call:structured", structured)

    async def sampling() -> None:
        r = await client.call_tool("ask-model", {"question": "why?"})
        expect(text(r).startswith(f"{MODEL} says:"), f"got {text(r)}")

    await check("sampling", sampling)

    async def elicitation() -> None:
        r = await client.call_tool("greet", {})
        expect(text(r) == "Hello, Ada!", f"got {text(r)}")

    await check("elicitation", elicitation)

    async def roots() -> None:
        r = await client.call_tool("list-roots", {})
        expect(ROOT in text(r), f"got {text(r)}")

    await check("roots", roots)

    async def two_rounds() -> None:
        r = await client.call_tool("interview", {})
        expect(text(r).startswith("Ada: sampled"), f"got {text(r)}")

    await check("input:two-rounds", two_rounds)

    async def resources_list() -> None:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        expect("interop://readme" in uris, f"resources: {uris}")

    await check("resources/list", resources_list)

    async def resources_read() -> None:
        r = await client.read_resource("interop://readme")
        expect(getattr(r.contents[0], "text", None) == "Served by the TypeScript SDK v2.", f"got {r}")

    await check("resources/read", resources_read)

    async def read_secret() -> None:
        r = await client.read_resource("interop://secret")
        expect(getattr(r.contents[0], "text", None) == "The secret, for Ada.", f"got {r}")

    await check("resources/read:elicitation", read_secret)

    async def templates() -> str:
        ts = (await client.list_resource_templates()).resource_templates
        return f"{len(ts)} templates"

    await check("resources/templates/list", templates)

    async def prompts_list() -> None:
        names = [p.name for p in (await client.list_prompts()).prompts]
        expect("review" in names and "signed" in names, f"prompts: {names}")

    await check("prompts/list", prompts_list)

    async def prompts_get() -> None:
        r = await client.get_prompt("review", {"topic": "bridges"})
        expect("Please review bridges." in r.model_dump_json(), f"got {r}")

    await check("prompts/get", prompts_get)

    async def signed() -> None:
        r = await client.get_prompt("signed", {})
        expect("Signed by Ada." in r.model_dump_json(), f"got {r}")

    await check("prompts/get:elicitation", signed)

    if handshake:

        async def list_changed() -> None:
            await client.call_tool("touch-tools", {})
            await notes.wait(
                lambda n: method_of(n) == "notifications/tools/list_changed", "tools/list_changed"
            )

        await check("notifications/tools/list_changed", list_changed)
    else:

        async def listen() -> None:
            async with client.listen(tools_list_changed=True) as sub:
                expect(sub.honored.tools_list_changed is True, f"honored {sub.honored}")
                await client.call_tool("touch-tools", {})
                async with asyncio.timeout(NOTIFY_S):
                    async for event in sub:
                        if isinstance(event, ToolsListChanged):
                            return

        await check("subscriptions/listen", listen)


def main() -> int:
    parser = py_common.parser("py_host.py", "the Python SDK client as a host of mcpc serve")
    parser.add_argument("--upstream", choices=["everything", "ts-server"], required=True)
    args = py_common.parse(parser, sys.argv[1:])
    asyncio.run(run(args))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
