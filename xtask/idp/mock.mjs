// `oauth2-mock-server` on a free loopback port, for the client-credentials
// and JWT-bearer (RFC 7523) grants. Started by the tests themselves:
// `node mock.mjs`; prints one line, `listening <issuer>`, on stdout once
// it accepts connections, then serves until it is killed.
//
// Its tokens are RS256 JWTs. Set up as a resource server expects of an
// authorization server that honours resource indicators (RFC 8707): the
// token's `aud` is the request's `resource`.

import { OAuth2Server } from 'oauth2-mock-server';

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
server.service.on('beforeTokenSigning', (token, req) => {
  if (typeof req.body?.resource === 'string') {
    token.payload.aud = req.body.resource;
  }
});
await server.start(0, '127.0.0.1');
// The address it listens on, not a name that may resolve elsewhere.
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
process.stdout.write(`listening ${server.issuer.url}\n`);
