#!/usr/bin/env node
// A host written with the official TypeScript SDK v2 client
// (`@modelcontextprotocol/client`), driving `mcpc serve` the way an
// application nobody here wrote would: every method the SDK offers, against
// the upstream server the bridge serves, in the era asked for.
//
// Usage: node ts-host.mjs --era handshake|stateless --upstream everything|ts-server \
//            -- <command> [args...]      (the bridge, spawned over stdio)
//        node ts-host.mjs --era ... --upstream ... --url <http://...>
//                                        (a bridge already serving Streamable HTTP)
//
// The era: `handshake` is the SDK's default (`versionNegotiation` absent: the
// `initialize` handshake); `stateless` pins 2026-07-28 (`{ pin }`: the
// connect-time `server/discover` must offer it, no fallback).
//
// Prints one JSON line per check on stdout, {"check", "ok", "detail"}, and
// exits 1 when any check failed (2 on a usage error). The bridge's stderr
// goes to this process's stderr.

import { Client } from '@modelcontextprotocol/client';
import { TIMEOUT_MS, eraOptions, negotiatedIn, parseArgs, transport, usageError } from './ts-common.mjs';

const UPSTREAMS = ['everything', 'ts-server'];
/** How long a notification the upstream announces may take to arrive. */
const NOTIFY_MS = 15_000;
/** What the host answers to the upstream's questions. */
const MODEL = 'ts-host-model';
const ROOT = 'file:///interop/ts-host-root';

const usage = usageError(
    'ts-host',
    'node ts-host.mjs --era handshake|stateless --upstream everything|ts-server (-- <command> [args...] | --url <url>)'
);
const opts = parseArgs(process.argv.slice(2), usage, { '--upstream': value => value });
if (!UPSTREAMS.includes(opts.upstream)) usage('--upstream must be everything or ts-server');
let failed = 0;

function report(check, ok, detail) {
    if (!ok) failed++;
    process.stdout.write(JSON.stringify({ check, ok, detail: String(detail).slice(0, 500) }) + '\n');
}

/** Runs one check: `fn` returns a detail (ok) or throws (failed). */
async function check(name, fn) {
    try {
        report(name, true, (await fn()) ?? '');
    } catch (e) {
        report(name, false, e instanceof Error ? e.message : String(e));
    }
}

function expect(cond, what) {
    if (!cond) throw new Error(what);
}

/** The text blocks of a tool result, joined. */
function text(result) {
    return (result.content ?? []).filter(b => b.type === 'text').map(b => b.text).join('\n');
}

/** Resolves with the first notification `pick` accepts, within NOTIFY_MS. */
function waiter() {
    const pending = [];
    const seen = [];
    return {
        push(n) {
            seen.push(n);
            for (const p of pending.splice(0)) {
                if (p.pick(n)) p.resolve(n);
                else pending.push(p);
            }
        },
        wait(pick, what) {
            const hit = seen.find(pick);
            if (hit !== undefined) return Promise.resolve(hit);
            return new Promise((resolve, reject) => {
                const entry = { pick, resolve };
                pending.push(entry);
                setTimeout(() => {
                    const at = pending.indexOf(entry);
                    if (at >= 0) pending.splice(at, 1);
                    reject(new Error(`no ${what} within ${NOTIFY_MS} ms`));
                }, NOTIFY_MS);
            });
        }
    };
}

const notes = waiter();
const client = new Client(
    { name: 'ts-sdk-v2-interop-host', version: '2.4.0' },
    {
        capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
        ...eraOptions(opts.era)
    }
);
client.setRequestHandler('sampling/createMessage', async request => {
    const last = request.params.messages.at(-1);
    const asked = last?.content?.type === 'text' ? last.content.text : '';
    return { model: MODEL, role: 'assistant', content: { type: 'text', text: `sampled (${asked.length} chars asked)` } };
});
client.setRequestHandler('elicitation/create', async request => {
    const props = request.params.requestedSchema?.properties ?? {};
    const content = {};
    for (const [key, schema] of Object.entries(props)) {
        if (schema.type === 'string' && schema.format === undefined && schema.enum === undefined && schema.oneOf === undefined) {
            content[key] = 'Ada';
        }
    }
    return { action: 'accept', content };
});
client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: ROOT, name: 'ts-host root' }] }));
for (const method of [
    'notifications/message',
    'notifications/resources/updated',
    'notifications/tools/list_changed',
    'notifications/resources/list_changed',
    'notifications/prompts/list_changed'
]) {
    client.setNotificationHandler(method, n => notes.push(n));
}

const req = { timeout: TIMEOUT_MS };

await check('connect', async () => {
    await client.connect(transport(opts, { env: process.env }), req);
    const version = negotiatedIn(client, opts.era);
    return `${version} with ${client.getServerVersion()?.name}`;
});
if (failed > 0) process.exit(1);

const handshake = opts.era === 'handshake';

if (handshake) {
    await check('ping', async () => {
        await client.ping(req);
    });
}

/** The tools each upstream lists, of those the checks use. */
const LISTED = {
    everything: ['echo', 'get-sum', 'trigger-long-running-operation', 'trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list'],
    'ts-server': ['echo', 'add', 'greet', 'ask-model', 'list-roots', 'interview', 'touch-tools']
};

await check('tools/list', async () => {
    const { tools } = await client.listTools(undefined, req);
    const names = tools.map(t => t.name);
    for (const want of LISTED[opts.upstream]) {
        expect(names.includes(want), `${want} missing from ${names.join(',')}`);
    }
    return `${tools.length} tools`;
});
await check('tools/call', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { message: 'hi' } }, req);
    expect(text(r) === 'Echo: hi', `echo gave ${JSON.stringify(r)}`);
});

if (opts.upstream === 'everything') {
    await check('tools/call:structured', async () => {
        const r = await client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } }, req);
        expect(r.structuredContent?.temperature === 36, `got ${JSON.stringify(r.structuredContent)}`);
    });
    await check('tools/call:progress', async () => {
        const seen = [];
        const r = await client.callTool(
            { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
            { ...req, onprogress: p => seen.push(p.progress) }
        );
        expect(text(r).includes('completed'), `got ${text(r)}`);
        // The client may let the result overtake the last progress (sent
        // before it; seen in both eras on a loaded machine): the first two
        // must arrive, in order. When a server's request (the everything
        // server's roots/list) made the call an input round, the SDK hands
        // the retry's first update to the callback twice (the bridge sends
        // 1, 2, 3 once, on the retry's token): repeats are not counted.
        const distinct = seen.filter((p, i) => i === 0 || p !== seen[i - 1]);
        expect(distinct.slice(0, 2).join() === '1,2', `progress seen: ${JSON.stringify(seen)}`);
        return `progress ${seen.join(',')}`;
    });
    await check('sampling', async () => {
        const r = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } }, req);
        expect(text(r).includes(MODEL), `got ${text(r)}`);
    });
    await check('elicitation', async () => {
        const r = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }, req);
        expect(text(r).includes('Name: Ada'), `got ${text(r)}`);
    });
    await check('roots', async () => {
        const r = await client.callTool({ name: 'get-roots-list', arguments: {} }, req);
        expect(text(r).includes(ROOT), `got ${text(r)}`);
    });
    let firstUri;
    await check('resources/list', async () => {
        const { resources } = await client.listResources(undefined, req);
        expect(resources.length > 0, 'no resources');
        firstUri = resources[0].uri;
        return `${resources.length} resources`;
    });
    await check('resources/read', async () => {
        expect(firstUri !== undefined, 'no resource listed');
        const r = await client.readResource({ uri: firstUri }, req);
        expect(r.contents.length > 0 && r.contents[0].uri === firstUri, `got ${JSON.stringify(r).slice(0, 200)}`);
    });
    await check('resources/templates/list', async () => {
        const { resourceTemplates } = await client.listResourceTemplates(undefined, req);
        const uris = resourceTemplates.map(t => t.uriTemplate);
        expect(uris.includes('demo://resource/dynamic/text/{resourceId}'), `templates: ${uris.join(',')}`);
    });
    await check('resources/read:template', async () => {
        const r = await client.readResource({ uri: 'demo://resource/dynamic/text/7' }, req);
        expect(JSON.stringify(r.contents).includes('7'), `got ${JSON.stringify(r).slice(0, 200)}`);
    });
    await check('prompts/list', async () => {
        const { prompts } = await client.listPrompts(undefined, req);
        const names = prompts.map(p => p.name);
        for (const want of ['simple-prompt', 'args-prompt', 'completable-prompt']) {
            expect(names.includes(want), `${want} missing from ${names.join(',')}`);
        }
    });
    await check('prompts/get', async () => {
        const r = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } }, req);
        expect(JSON.stringify(r.messages).includes("What's weather in Paris?"), `got ${JSON.stringify(r)}`);
    });
    await check('completion/complete:prompt', async () => {
        const r = await client.complete(
            { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'En' } },
            req
        );
        expect(JSON.stringify(r.completion.values) === '["Engineering"]', `got ${JSON.stringify(r)}`);
    });
    await check('completion/complete:resource', async () => {
        const r = await client.complete(
            { ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '3' } },
            req
        );
        expect(JSON.stringify(r.completion.values) === '["3"]', `got ${JSON.stringify(r)}`);
    });
    const watched = 'demo://resource/dynamic/text/1';
    if (handshake) {
        await check('logging/setLevel', async () => {
            await client.setLoggingLevel('debug', req);
            await client.callTool({ name: 'toggle-simulated-logging', arguments: {} }, req);
            const n = await notes.wait(n => n.method === 'notifications/message', 'log message');
            return `a ${n.params.level} message`;
        });
        await check('resources/subscribe', async () => {
            await client.subscribeResource({ uri: watched }, req);
            await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }, req);
            await notes.wait(
                n => n.method === 'notifications/resources/updated' && n.params.uri === watched,
                'resource update'
            );
            await client.unsubscribeResource({ uri: watched }, req);
        });
    } else {
        await check('subscriptions/listen', async () => {
            const sub = await client.listen({ resourceSubscriptions: [watched] }, req);
            try {
                expect(
                    (sub.honoredFilter.resourceSubscriptions ?? []).includes(watched),
                    `honored ${JSON.stringify(sub.honoredFilter)}`
                );
                await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }, req);
                await notes.wait(
                    n => n.method === 'notifications/resources/updated' && n.params.uri === watched,
                    'resource update'
                );
            } finally {
                await sub.close();
            }
        });
    }
} else {
    await check('tools/call:structured', async () => {
        const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, req);
        expect(r.structuredContent?.sum === 5, `got ${JSON.stringify(r)}`);
    });
    await check('sampling', async () => {
        const r = await client.callTool({ name: 'ask-model', arguments: { question: 'why?' } }, req);
        expect(text(r).startsWith(`${MODEL} says:`), `got ${text(r)}`);
    });
    await check('elicitation', async () => {
        const r = await client.callTool({ name: 'greet', arguments: {} }, req);
        expect(text(r) === 'Hello, Ada!', `got ${text(r)}`);
    });
    await check('roots', async () => {
        const r = await client.callTool({ name: 'list-roots', arguments: {} }, req);
        expect(text(r).includes(ROOT), `got ${text(r)}`);
    });
    await check('input:two-rounds', async () => {
        const r = await client.callTool({ name: 'interview', arguments: {} }, req);
        expect(text(r).startsWith('Ada: sampled'), `got ${text(r)}`);
    });
    await check('resources/list', async () => {
        const { resources } = await client.listResources(undefined, req);
        const uris = resources.map(r => r.uri);
        expect(uris.includes('interop://readme'), `resources: ${uris.join(',')}`);
    });
    await check('resources/read', async () => {
        const r = await client.readResource({ uri: 'interop://readme' }, req);
        expect(r.contents[0]?.text === 'Served by the TypeScript SDK v2.', `got ${JSON.stringify(r)}`);
    });
    await check('resources/read:elicitation', async () => {
        const r = await client.readResource({ uri: 'interop://secret' }, req);
        expect(r.contents[0]?.text === 'The secret, for Ada.', `got ${JSON.stringify(r)}`);
    });
    await check('resources/templates/list', async () => {
        const { resourceTemplates } = await client.listResourceTemplates(undefined, req);
        return `${resourceTemplates.length} templates`;
    });
    await check('prompts/list', async () => {
        const { prompts } = await client.listPrompts(undefined, req);
        const names = prompts.map(p => p.name);
        expect(names.includes('review') && names.includes('signed'), `prompts: ${names.join(',')}`);
    });
    await check('prompts/get', async () => {
        const r = await client.getPrompt({ name: 'review', arguments: { topic: 'bridges' } }, req);
        expect(JSON.stringify(r.messages).includes('Please review bridges.'), `got ${JSON.stringify(r)}`);
    });
    await check('prompts/get:elicitation', async () => {
        const r = await client.getPrompt({ name: 'signed', arguments: {} }, req);
        expect(JSON.stringify(r.messages).includes('Signed by Ada.'), `got ${JSON.stringify(r)}`);
    });
    if (handshake) {
        await check('notifications/tools/list_changed', async () => {
            await client.callTool({ name: 'touch-tools', arguments: {} }, req);
            await notes.wait(n => n.method === 'notifications/tools/list_changed', 'tools/list_changed');
        });
    } else {
        await check('subscriptions/listen', async () => {
            const sub = await client.listen({ toolsListChanged: true }, req);
            try {
                expect(sub.honoredFilter.toolsListChanged === true, `honored ${JSON.stringify(sub.honoredFilter)}`);
                await client.callTool({ name: 'touch-tools', arguments: {} }, req);
                await notes.wait(n => n.method === 'notifications/tools/list_changed', 'tools/list_changed');
            } finally {
                await sub.close();
            }
        });
    }
}

await client.close().catch(e => console.error('ts-host: close:', e?.message ?? e));
process.exit(failed > 0 ? 1 : 0);
