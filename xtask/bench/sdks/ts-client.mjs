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
//
// It runs beside the installed packages and `ts-common.mjs` (from
// `xtask/interop/`), where `cargo xtask bench sdks` copies it.

import { Client } from '@modelcontextprotocol/client';
import { TIMEOUT_MS, eraOptions, negotiatedIn, parseArgs, transport, usageError } from './ts-common.mjs';

/** The echoed message: the one `sdk-bench` sends for ours. */
const MESSAGE = 'the quick brown fox jumps over the lazy dog';

const usage = usageError(
    'ts-client',
    'node ts-client.mjs --era handshake|stateless --calls N --warm W --depth D (--url <url> | -- <command> [args...])'
);
const count = (value, flag) => {
    const n = Number.parseInt(value, 10);
    if (!(n >= 0 && n <= 10_000_000)) usage(`${flag} takes a count, not ${value}`);
    return n;
};
const opts = parseArgs(
    process.argv.slice(2),
    usage,
    { '--calls': count, '--warm': count, '--depth': count },
    { calls: 0, warm: 0, depth: 1 }
);
if (opts.depth < 1 || opts.calls < opts.depth) usage('--depth must be at least 1 and at most --calls');
const client = new Client({ name: 'ts-sdk-v2-bench', version: '2.4.0' }, eraOptions(opts.era));
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
    await client.connect(transport(opts), req);
    const negotiated = negotiatedIn(client, opts.era);
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
