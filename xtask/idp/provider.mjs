// A certified OpenID provider (`oidc-provider`) on a free loopback port,
// as the authorization server of the end-to-end OAuth tests.
//
// Started by the tests themselves: `node provider.mjs`, with the options as
// JSON in `IDP_OPTIONS`. Prints one line, `listening <issuer>`, on stdout
// once it accepts connections, then serves until it is killed.
//
// On: dynamic client registration, PKCE (required), refresh-token
// rotation, resource indicators (RFC 8707, JWT access tokens whose `aud`
// is the resource), DPoP (RFC 9449), client credentials and revocation.
// Off: the provider's own login and consent pages. `/interaction/<uid>`
// approves at once instead (the login as `login_hint` or `account`, then a grant of what
// the consent prompt lists), so a test that plays the browser follows
// redirects and keeps cookies, and nothing else.
//
// Options (all optional):
//   access_token_alg   "ES256" (default) or "RS256": how access tokens are signed
//   access_token_ttl   seconds an access token lives (default 3600)
//   resources          the only resource indicators known (default: any);
//                      another is refused with `invalid_target`
//   default_resource   the resource when the client names none (default:
//                      none, and then the token is opaque)
//   require_audience   an `audience` authorization parameter that must be
//                      sent with exactly this value (an Auth0-style quirk);
//                      it then is the resource of the grant
//   dpop_nonce         true: DPoP proofs need a server nonce
//   strict_offline     true: a refresh token only for `offline_access` asked
//                      with `prompt=consent` (OpenID Connect's rule, which
//                      this provider applies); default: to every client
//                      registered for the refresh_token grant
//   clients            statically registered clients (client metadata)
//   account            the account id a login approves when the request has
//                      no `login_hint` (default "user-1")

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

import Provider, { errors } from 'oidc-provider';

const options = JSON.parse(process.env.IDP_OPTIONS || '{}');
const alg = options.access_token_alg || 'ES256';
const accessTokenTTL = options.access_token_ttl || 3600;
const account = options.account || 'user-1';

function signingKey(type, params, kid, keyAlg) {
  const jwk = generateKeyPairSync(type, params).privateKey.export({ format: 'jwk' });
  return { ...jwk, kid, alg: keyAlg, use: 'sig' };
}

const resourceServer = (indicator) => ({
  scope: 'mcp',
  audience: indicator,
  accessTokenTTL,
  accessTokenFormat: 'jwt',
  jwt: { sign: { alg } },
});

const extraParams = {};
if (options.require_audience) {
  extraParams.audience = (ctx, value) => {
    if (ctx.oidc.route === 'authorization' && value !== options.require_audience) {
      throw new errors.InvalidRequest('this provider needs its audience parameter');
    }
  };
}
const configuration = {
  jwks: {
    keys: [
      signingKey('rsa', { modulusLength: 2048 }, 'rs-1', 'RS256'),
      signingKey('ec', { namedCurve: 'P-256' }, 'es-1', 'ES256'),
    ],
  },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  clients: options.clients || [],
  scopes: ['openid', 'offline_access', 'mcp'],
  extraParams,
  pkce: { required: () => true },
  rotateRefreshToken: () => true,
  ...(options.strict_offline
    ? {}
    : { issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token') }),
  ttl: { AccessToken: accessTokenTTL, ClientCredentials: accessTokenTTL },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    dPoP: {
      enabled: true,
      nonceSecret: randomBytes(32),
      requireNonce: () => Boolean(options.dpop_nonce),
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, _client, oneOf) => {
        if (oneOf) return oneOf;
        if (options.require_audience && ctx.oidc.params?.audience) return ctx.oidc.params.audience;
        return options.default_resource;
      },
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        const known = options.resources
          || (options.require_audience ? [options.require_audience] : undefined);
        if (known && !known.includes(indicator)) {
          throw new errors.InvalidTarget('unknown resource');
        }
        return resourceServer(indicator);
      },
    },
  },
};

const server = createServer();
await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
const issuer = `http://127.0.0.1:${server.address().port}`;
const provider = new Provider(issuer, configuration);

// The interaction that needs no user: log in as `account`, then grant
// what the consent prompt says is missing.
provider.use(async (ctx, next) => {
  if (ctx.method !== 'GET' || !/^\/interaction\/[^/]+$/.test(ctx.path)) {
    return next();
  }
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: params.login_hint || account } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    result = { error: 'access_denied', error_description: `unexpected prompt ${prompt.name}` };
  }
  const to = await provider.interactionResult(ctx.req, ctx.res, result, {
    mergeWithLastSubmission: false,
  });
  ctx.status = 303;
  ctx.redirect(to);
  return undefined;
});

server.on('request', provider.callback());
process.stdout.write(`listening ${issuer}\n`);
