#!/usr/bin/env node
// The TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned in
// `xtask/interop/package.json`) timed the way `sdk-bench` times ours:
// connect, warm up, then either sequential `tools/call echo` (latency of
// each) or calls kept `--depth` in flight (calls per second).
//
// Usage: node ts-client.mjs --era handshake|stateless --calls N --warm W --depth D \
//            (--url <http://...> | -- <command> [args...])
// `--depth 1` is the sequential phase. Prints one JSON line on stdout:
// {"sdk", "node", "negotiated", "depth", "calls", "p50_us", "p99_us",
//  "calls_per_s", "cpu_us_per_call"}; exits 1 on any failure (a wrong
// echo included), 2 on a usage error. Every request has a deadline.

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** Each request's deadline. */
const TIMEOUT_MS = 20_000;
/** The echoed message: the one `sdk-bench` sends for ours. */
const MESSAGE = 'the quick brown fox jumps over the lazy dog';

function usage(why) {
    console.error(`ts-client: ${why}`);
    console.error('usage: node ts-client.mjs --era handshake|stateless --calls N --warm W --depth D (--url <url> | -- <command> [args...])');
    process.exit(2);
}

function parseArgs(argv) {
    const out = { era: undefined, calls: 0, warm: 0, depth: 1, url: undefined, command: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === '--') {
            out.command = argv.slice(i + 1);
            break;
        }
        const value = argv[i + 1];
        if (value === undefined) usage(`${a} needs a value`);
        if (a === '--era') out.era = value;
        else if (a === '--url') out.url = value;
        else if (['--calls', '--warm', '--depth'].includes(a)) {
            const n = Number.parseInt(value, 10);
            if (!(n >= 0 && n <= 10_000_000)) usage(`${a} takes a count, not ${value}`);
            out[a.slice(2)] = n;
        } else usage(`unknown argument ${a}`);
        i++;
    }
    if (!['handshake', 'stateless'].includes(out.era)) usage('--era must be handshake or stateless');
    if (out.depth < 1 || out.calls < out.depth) usage('--depth must be at least 1 and at most --calls');
    if ((out.url === undefined) === (out.command.length === 0)) usage('give either -- <command> or --url');
    return out;
}

const opts = parseArgs(process.argv.slice(2));
const client = new Client(
    { name: 'ts-sdk-v2-bench', version: '2.4.0' },
    opts.era === 'stateless' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}
);
const req = { timeout: TIMEOUT_MS };

async function call() {
    const r = await client.callTool({ name: 'echo', arguments: { message: MESSAGE } }, req);
    const text = r.content?.[0]?.text;
    if (r.isError || typeof text !== 'string' || !text.includes(MESSAGE)) {
        throw new Error(`echo gave ${JSON.stringify(r).slice(0, 300)}`);
    }
}

/** `n` calls, `depth` of them in flight; the latency of each when `lat` is given. */
async function run(n, depth, lat) {
    const perWorker = Math.floor(n / depth);
    const worker = async () => {
        for (let i = 0; i < perWorker; i++) {
            const start = process.hrtime.bigint();
            await call();
            if (lat) lat.push(Number(process.hrtime.bigint() - start) / 1000);
        }
    };
    await Promise.all(Array.from({ length: depth }, worker));
    return perWorker * depth;
}

/** The q-quantile by nearest rank. */
function quantile(sorted, q) {
    if (sorted.length === 0) return 0;
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil(sorted.length * q)));
    return sorted[rank - 1];
}

try {
    const transport =
        opts.url !== undefined
            ? new (await import('@modelcontextprotocol/client')).StreamableHTTPClientTransport(new URL(opts.url))
            : new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'inherit' });
    await client.connect(transport, req);
    const negotiated = client.getNegotiatedProtocolVersion();
    if ((negotiated === '2026-07-28') !== (opts.era === 'stateless')) {
        throw new Error(`negotiated ${negotiated} for the ${opts.era} era`);
    }
    if (opts.warm > 0) await run(opts.warm, Math.min(opts.depth, opts.warm), null);
    const lat = opts.depth === 1 ? [] : null;
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    const done = await run(opts.calls, opts.depth, lat);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    lat?.sort((a, b) => a - b);
    process.stdout.write(
        JSON.stringify({
            sdk: 'typescript',
            node: process.versions.node,
            negotiated,
            depth: opts.depth,
            calls: done,
            p50_us: lat ? quantile(lat, 0.5) : null,
            p99_us: lat ? quantile(lat, 0.99) : null,
            calls_per_s: done / seconds,
            cpu_us_per_call: (cpu.user + cpu.system) / done
        }) + '\n'
    );
    await Promise.race([client.close(), new Promise(resolve => setTimeout(resolve, 5_000))]);
    process.exit(0);
} catch (e) {
    console.error(`ts-client: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
}
