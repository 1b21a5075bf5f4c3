#!/usr/bin/env node
// A server built with the official MCP Apps SDK (`@modelcontextprotocol/ext-apps`)
// on the TypeScript SDK v2, the MCP Apps peer of `cargo xtask interop`.
//
// Usage: node apps-server.mjs        (stdio)
//
// It serves:
// - `show-chart`: a tool with a view (`ui://interop/chart.html`), visible to
//   the model and the view;
// - `refresh-chart`: a tool only the view may call (visibility ["app"]);
// - `plain`: a tool without a view;
// - `ui-capability`: JSON text of the MCP Apps settings the client declared
//   (`null` when it declared none), in either era;
// - the view `ui://interop/chart.html` (`text/html;profile=mcp-app`) with a
//   content security policy, two permissions and a border preference.
//
// Its log goes to stderr.

import { CLIENT_CAPABILITIES_META_KEY, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import {
    RESOURCE_MIME_TYPE,
    getUiCapability,
    registerAppResource,
    registerAppTool
} from '@modelcontextprotocol/ext-apps/server';

const log = (...args) => console.error('[apps-server]', ...args);
const VIEW = 'ui://interop/chart.html';

function build() {
    const server = new McpServer(
        { name: 'ext-apps-interop', version: '2.0.4' },
        { capabilities: { tools: {}, resources: {} } }
    );
    registerAppTool(
        server,
        'show-chart',
        {
            title: 'Show chart',
            description: 'Shows a chart of the data',
            _meta: { ui: { resourceUri: VIEW, visibility: ['model', 'app'] } }
        },
        async () => ({ content: [{ type: 'text', text: 'chart shown' }] })
    );
    registerAppTool(
        server,
        'refresh-chart',
        {
            description: 'Refreshes the chart (called by the view)',
            _meta: { ui: { resourceUri: VIEW, visibility: ['app'] } }
        },
        async () => ({ content: [{ type: 'text', text: 'refreshed' }] })
    );
    server.registerTool('plain', { description: 'A tool without a view' }, async () => ({
        content: [{ type: 'text', text: 'plain' }]
    }));
    server.registerTool(
        'ui-capability',
        { description: 'The MCP Apps settings the client declared' },
        async ctx => {
            // The stateless era carries the capabilities in each request;
            // the handshake era gave them in `initialize`.
            const capabilities =
                ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.server.getClientCapabilities();
            return { content: [{ type: 'text', text: JSON.stringify(getUiCapability(capabilities) ?? null) }] };
        }
    );
    registerAppResource(
        server,
        'chart view',
        VIEW,
        { description: 'The chart', mimeType: RESOURCE_MIME_TYPE },
        async () => ({
            contents: [
                {
                    uri: VIEW,
                    mimeType: RESOURCE_MIME_TYPE,
                    text: '<!doctype html><html><body><div id="chart"></div></body></html>',
                    _meta: {
                        ui: {
                            csp: {
                                connectDomains: ['https://api.example.com'],
                                resourceDomains: ['https://cdn.example.com']
                            },
                            permissions: { clipboardWrite: {}, geolocation: {} },
                            prefersBorder: true
                        }
                    }
                }
            ]
        })
    );
    return server;
}

serveStdio(build, { onerror: error => log(error.message) });
