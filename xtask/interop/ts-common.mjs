// What the scripts that drive the TypeScript SDK v2 client share
// (`ts-host.mjs`, a host of `mcpc serve`; `xtask/bench/sdks/ts-client.mjs`,
// timed by `sdk-bench`): their command line, the client options of an era,
// the transport to the server and the check of the era negotiated.
//
// Copied beside the installed packages with the scripts that import it
// (`cargo xtask interop` installs it), where they all run.

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** The eras a script is asked to speak. */
export const ERAS = ['handshake', 'stateless'];
/** Each request's deadline; nothing waits longer. */
export const TIMEOUT_MS = 20_000;

/** A usage error: says why and how `name` is called, then exits 2. */
export function usageError(name, line) {
    return why => {
        console.error(`${name}: ${why}`);
        console.error(`usage: ${line}`);
        process.exit(2);
    };
}

/**
 * The command line `--era handshake|stateless`, then either `--url URL` or
 * `-- <command> [args...]`, and the flags of `flags` (`--name` to a
 * function of the value and the flag that returns what to keep, or calls
 * `usage`), starting from `defaults`. Anything else calls `usage`.
 */
export function parseArgs(argv, usage, flags = {}, defaults = {}) {
    const out = { era: undefined, url: undefined, command: [], ...defaults };
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
        else if (Object.hasOwn(flags, a)) out[a.slice(2)] = flags[a](value, a);
        else usage(`unknown argument ${a}`);
        i++;
    }
    if (!ERAS.includes(out.era)) usage('--era must be handshake or stateless');
    if ((out.url === undefined) === (out.command.length === 0)) usage('give either -- <command> or --url');
    return out;
}

/**
 * The client options of an era: `handshake` is the SDK's default
 * (`versionNegotiation` absent: the `initialize` handshake); `stateless`
 * pins 2026-07-28 (`{ pin }`: the connect-time `server/discover` must offer
 * it, no fallback).
 */
export function eraOptions(era) {
    return era === 'stateless' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
}

/**
 * The transport to the server: Streamable HTTP to `--url`, or the command
 * spawned over stdio (its stderr this process's), with `stdio`'s extra
 * options (such as `env`).
 */
export function transport(opts, stdio = {}) {
    if (opts.url !== undefined) return new StreamableHTTPClientTransport(new URL(opts.url));
    return new StdioClientTransport({
        command: opts.command[0],
        args: opts.command.slice(1),
        stderr: 'inherit',
        ...stdio
    });
}

/** The revision `client` negotiated; throws unless it is the era's. */
export function negotiatedIn(client, era) {
    const version = client.getNegotiatedProtocolVersion();
    if ((version === '2026-07-28') !== (era === 'stateless')) {
        throw new Error(`negotiated ${version} for the ${era} era`);
    }
    return version;
}
