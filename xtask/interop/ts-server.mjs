#!/usr/bin/env node
// A server built with the official TypeScript SDK v2 (`@modelcontextprotocol/server`),
// the stateless-era (2026-07-28) peer of `cargo xtask interop`. The SDK also
// serves the handshake era from the same definitions (its "legacy" leg).
//
// Usage: node ts-server.mjs stdio
//        PORT=3002 node ts-server.mjs http   (endpoint /mcp on 127.0.0.1;
//                                             prints "listening on <url>" once ready)
//
// It serves:
// - tools: `echo`; `add` (structuredContent, outputSchema); `greet` (asks the
//   user for a name: elicitation through an input_required result); `ask-model`
//   (sampling); `list-roots` (roots); `interview` (two rounds: elicitation, then
//   sampling with the answer, the step carried in requestState); `era` (the era
//   of the instance that answered); `touch-tools` (announces a change of the
//   tool list to open `subscriptions/listen` streams, or unsolicited in the
//   handshake era);
// - a resource `interop://readme` and a resource `interop://secret` that asks
//   for a password first (elicitation on resources/read);
// - a prompt `review` (argument `topic`) and a prompt `signed` that asks for a
//   signature first (elicitation on prompts/get).
//
// Its log goes to stderr.

import http from 'node:http';

import {
    McpServer,
    acceptedContent,
    createMcpHandler,
    inputRequired,
    inputResponse
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const mode = process.argv[2] ?? 'stdio';
const log = (...args) => console.error('[ts-server]', ...args);

/** Set in http mode: publishes change events to open listen streams. */
let httpHandler;

const nameSchema = z.object({ name: z.string() });
const passwordSchema = z.object({ password: z.string() });
const signatureSchema = z.object({ signature: z.string() });

/** The text of a sampling answer, or undefined. */
function sampledText(responses, key) {
    const view = inputResponse(responses, key);
    if (view.kind !== 'sampling') return undefined;
    const content = Array.isArray(view.result.content) ? view.result.content[0] : view.result.content;
    return content?.type === 'text' ? { text: content.text, model: view.result.model } : undefined;
}

function build({ era }) {
    const server = new McpServer(
        { name: 'ts-sdk-v2-interop', version: '2.4.0' },
        {
            capabilities: {
                tools: { listChanged: true },
                resources: { listChanged: true },
                prompts: { listChanged: true }
            },
            instructions: 'An interop peer written with the TypeScript SDK v2.'
        }
    );

    server.registerTool(
        'echo',
        { description: 'Echoes the message', inputSchema: z.object({ message: z.string() }) },
        async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] })
    );

    server.registerTool(
        'add',
        {
            description: 'Adds two numbers, with structured output',
            inputSchema: z.object({ a: z.number(), b: z.number() }),
            outputSchema: z.object({ sum: z.number(), expression: z.string() })
        },
        async ({ a, b }) => {
            const output = { sum: a + b, expression: `${a} + ${b}` };
            return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
        }
    );

    server.registerTool(
        'greet',
        { description: 'Asks the user for a name, then greets them' },
        async ctx => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'who', nameSchema);
            if (answer === undefined) {
                const view = inputResponse(ctx.mcpReq.inputResponses, 'who');
                if (view.kind === 'elicit') {
                    return { content: [{ type: 'text', text: `No name given (${view.action}).` }] };
                }
                return inputRequired({
                    inputRequests: {
                        who: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema })
                    }
                });
            }
            return { content: [{ type: 'text', text: `Hello, ${answer.name}!` }] };
        }
    );

    server.registerTool(
        'ask-model',
        { description: 'Asks the client model a question', inputSchema: z.object({ question: z.string() }) },
        async ({ question }, ctx) => {
            const answer = sampledText(ctx.mcpReq.inputResponses, 'answer');
            if (answer === undefined) {
                return inputRequired({
                    inputRequests: {
                        answer: inputRequired.createMessage({
                            messages: [{ role: 'user', content: { type: 'text', text: question } }],
                            systemPrompt: 'Answer briefly.',
                            maxTokens: 50
                        })
                    }
                });
            }
            return { content: [{ type: 'text', text: `${answer.model} says: ${answer.text}` }] };
        }
    );

    server.registerTool('list-roots', { description: "Lists the client's roots" }, async ctx => {
        const view = inputResponse(ctx.mcpReq.inputResponses, 'roots');
        if (view.kind !== 'roots') {
            return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
        }
        return { content: [{ type: 'text', text: view.roots.map(r => r.uri).join('\n') }] };
    });

    server.registerTool(
        'interview',
        { description: 'Two rounds: asks for a name, then asks the model for a fact about it' },
        async ctx => {
            const step = ctx.mcpReq.requestState();
            if (step === undefined) {
                return inputRequired({
                    inputRequests: {
                        who: inputRequired.elicit({ message: 'Whom shall we ask about?', requestedSchema: nameSchema })
                    },
                    requestState: 'step-1'
                });
            }
            if (step === 'step-1') {
                const answer = acceptedContent(ctx.mcpReq.inputResponses, 'who', nameSchema);
                if (answer === undefined) return { content: [{ type: 'text', text: 'No name.' }], isError: true };
                return inputRequired({
                    inputRequests: {
                        fact: inputRequired.createMessage({
                            messages: [{ role: 'user', content: { type: 'text', text: `A fact about ${answer.name}?` } }],
                            maxTokens: 50
                        })
                    },
                    requestState: `step-2:${answer.name}`
                });
            }
            if (typeof step === 'string' && step.startsWith('step-2:')) {
                const fact = sampledText(ctx.mcpReq.inputResponses, 'fact');
                if (fact === undefined) return { content: [{ type: 'text', text: 'No fact.' }], isError: true };
                return { content: [{ type: 'text', text: `${step.slice(7)}: ${fact.text}` }] };
            }
            return { content: [{ type: 'text', text: `Unknown state ${String(step)}` }], isError: true };
        }
    );

    server.registerTool(
        'era',
        { description: 'The era of the instance that answered', outputSchema: z.object({ era: z.string() }) },
        async () => ({ content: [{ type: 'text', text: era }], structuredContent: { era } })
    );

    server.registerTool('touch-tools', { description: 'Announces that the tool list changed' }, async () => {
        if (httpHandler !== undefined) httpHandler.notify.toolsChanged();
        else server.sendToolListChanged();
        return { content: [{ type: 'text', text: 'announced' }] };
    });

    server.registerResource(
        'readme',
        'interop://readme',
        { title: 'Read me', description: 'A plain text resource', mimeType: 'text/plain' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Served by the TypeScript SDK v2.' }] })
    );

    server.registerResource(
        'secret',
        'interop://secret',
        { description: 'Asks for a password first', mimeType: 'text/plain' },
        async (uri, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'password', passwordSchema);
            if (answer === undefined) {
                return inputRequired({
                    inputRequests: {
                        password: inputRequired.elicit({ message: 'Password?', requestedSchema: passwordSchema })
                    }
                });
            }
            return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `The secret, for ${answer.password}.` }] };
        }
    );

    server.registerPrompt(
        'review',
        { title: 'Review', description: 'Asks for a review of a topic', argsSchema: z.object({ topic: z.string() }) },
        ({ topic }) => ({
            description: `A review of ${topic}`,
            messages: [{ role: 'user', content: { type: 'text', text: `Please review ${topic}.` } }]
        })
    );

    server.registerPrompt('signed', { description: 'Asks for a signature first' }, ctx => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'sig', signatureSchema);
        if (answer === undefined) {
            return inputRequired({
                inputRequests: { sig: inputRequired.elicit({ message: 'Sign here', requestedSchema: signatureSchema }) }
            });
        }
        return { messages: [{ role: 'user', content: { type: 'text', text: `Signed by ${answer.signature}.` } }] };
    });

    return server;
}

/** Serves one node:http request through the handler's web-standard face. */
async function serveHttp(handler, req, res) {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else if (value !== undefined) headers.set(name, value);
    }
    const aborter = new AbortController();
    res.on('close', () => aborter.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && body.length > 0;
    const request = new Request(url, {
        method: req.method,
        headers,
        body: hasBody ? body : undefined,
        signal: aborter.signal
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
        res.end();
        return;
    }
    const reader = response.body.getReader();
    aborter.signal.addEventListener('abort', () => reader.cancel().catch(() => {}));
    try {
        for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            res.write(value);
        }
    } catch (error) {
        if (!aborter.signal.aborted) log('response stream failed:', error);
    }
    res.end();
}

if (mode === 'stdio') {
    serveStdio(build, { onerror: error => log(error.message) });
} else if (mode === 'http') {
    const port = Number(process.env.PORT ?? 3002);
    httpHandler = createMcpHandler(build, { onerror: error => log(error.message) });
    const server = http.createServer((req, res) => {
        serveHttp(httpHandler, req, res).catch(error => {
            log('request failed:', error);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        });
    });
    server.listen(port, '127.0.0.1', () => {
        console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`);
    });
    for (const signal of ['SIGINT', 'SIGTERM']) {
        process.on(signal, () => {
            httpHandler.close().finally(() => process.exit(0));
        });
    }
} else {
    log(`unknown mode ${mode}: use stdio or http`);
    process.exit(2);
}
