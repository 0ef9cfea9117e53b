// Test-only course-platform origin for marketframe.academy.
//
// One node process on 127.0.0.1 serves both halves of the platform described in
// spec/course-platform-oauth.md:
//   * the authorization server: oidc-provider (an independent, certified OpenID Provider
//     implementation) with dynamic registration, PKCE S256, refresh tokens, revocation,
//     introspection, resource indicators and RFC 9207 `iss`, mounted on the spec's paths;
//   * a small protected resource: RFC 9728 metadata, openapi.json and a few /api paths that
//     validate bearer tokens through the provider's own token store and answer 401
//     invalid_token / 403 insufficient_scope with a WWW-Authenticate challenge.
//
// The login/consent "interaction" is automatic (a fixed test user who consents to what is
// asked), so a plain HTTP client following redirects can play the browser. A request header
// `X-Test-Decision: deny` on the browser leg makes the user refuse instead (an `error`
// redirect). Nothing here is for production.
//
// Usage: node server.js PORT  (or PORT / ACCESS_TOKEN_TTL in the environment)
// Prints "READY <issuer>" on stdout once listening.

import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

const port = Number(process.argv[2] || process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node server.js PORT');
  process.exit(2);
}
const accessTokenTTL = Number(process.env.ACCESS_TOKEN_TTL || 300);
const issuer = `http://127.0.0.1:${port}`;
// The API is the origin itself: its RFC 9728 metadata sits at the origin's well-known path.
const RESOURCE = issuer;
const RESOURCE_METADATA = `${issuer}/.well-known/oauth-protected-resource`;

const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'];
const API_SCOPES = [
  'courses:read', 'courses:write', 'students:read', 'students:write', 'members:read',
  'members:write', 'analytics:read', 'curriculum:read', 'curriculum:write', 'orders:read',
  'school:read', 'school:write', 'appearance:read', 'appearance:write', 'events:read',
  'events:write', 'membership_plans:read', 'membership_plans:write', 'coupons:read',
  'coupons:write', 'posts:read', 'posts:write', 'subscriptions:read', 'subscriptions:write',
  'digital_products:read', 'digital_products:write', 'comments:read', 'lecturers:read',
  'lecturers:write', 'storage:write', 'forms:read', 'pages:read', 'pages:write',
  'account:read', 'account:write',
];

const USER = {
  sub: 'student-0001',
  name: 'Lin Mei-Hua',
  given_name: 'Mei-Hua',
  family_name: 'Lin',
  email: 'mei-hua.lin@example.test',
  email_verified: true,
};

// Counters the tests read to prove what did (or did not) reach the server.
const stats = {
  token_requests: 0,
  registrations: 0,
  revocations: 0,
  introspections: 0,
  // "METHOD /path" of every request whose User-Agent is marketframe's client (not the browser)
  client_requests: {},
};

// How the API scopes are advertised. "hand" (default): listed on the authorization server
// too, by hand. "standard": the way oidc-provider is meant to be configured -- the API's
// scopes come from its resource server (getResourceServerInfo) and its RFC 9728 metadata,
// and the authorization server's RFC 8414 scopes_supported lists only the OpenID scopes.
const SCOPES_CONFIG = process.env.SCOPES_CONFIG || 'hand';
if (!['hand', 'standard'].includes(SCOPES_CONFIG)) {
  console.error(`SCOPES_CONFIG must be hand or standard, not ${SCOPES_CONFIG}`);
  process.exit(2);
}

const provider = new Provider(issuer, {
  clients: [],
  scopes: SCOPES_CONFIG === 'standard' ? OIDC_SCOPES : [...OIDC_SCOPES, ...API_SCOPES],
  claims: {
    openid: ['sub'],
    profile: ['name', 'given_name', 'family_name'],
    email: ['email', 'email_verified'],
  },
  cookies: { keys: ['academy-test-server-cookie-key-not-secret'] },
  findAccount: async (_ctx, id) => {
    if (id !== USER.sub) return undefined;
    return { accountId: id, claims: async () => ({ ...USER }) };
  },
  routes: {
    authorization: '/oauth/authorize',
    token: '/api/oauth/token',
    userinfo: '/api/oauth/userinfo',
    revocation: '/api/oauth/revoke',
    registration: '/api/oauth/register',
    introspection: '/api/oauth/introspect',
    jwks: '/api/oauth/jwks',
    end_session: '/oauth/logout',
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    userinfo: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => false,
      getResourceServerInfo: async (_ctx, resourceIndicator) => {
        if (resourceIndicator !== RESOURCE) throw new errors.InvalidTarget();
        return {
          scope: API_SCOPES.join(' '),
          audience: RESOURCE,
          accessTokenTTL,
          accessTokenFormat: 'opaque',
        };
      },
    },
  },
  pkce: { required: () => true },
  // A refresh token whenever the client registered the grant (no offline_access dance).
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: {
    AccessToken: accessTokenTTL,
    AuthorizationCode: 60,
    IdToken: 3600,
    RefreshToken: 24 * 3600,
    Grant: 24 * 3600,
    Interaction: 600,
    Session: 24 * 3600,
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  renderError: async (ctx, out) => {
    ctx.type = 'json';
    ctx.body = out;
  },
});

// Why a request failed, for the test log (oidc-provider hides it from the client). No tokens.
for (const event of ['grant.error', 'introspection.error', 'revocation.error',
  'registration_create.error', 'userinfo.error', 'authorization.error', 'server_error']) {
  provider.on(event, (_ctx, err) => {
    console.log(`${event}: ${err?.error || err?.name}: ${err?.error_description || ''} ${err?.error_detail || ''}`);
  });
}

const callback = provider.callback();

function json(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

async function handleInteraction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session, grantId } = details;
  if (String(req.headers['x-test-decision'] || '').toLowerCase() === 'deny') {
    await provider.interactionFinished(req, res, {
      error: 'access_denied',
      error_description: 'the user declined the request',
    }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: USER.sub } }, {
      mergeWithLastSubmission: false,
    });
    return;
  }
  if (prompt.name === 'consent') {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const d = prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    if (d.missingResourceScopes) {
      for (const [indicator, scopes] of Object.entries(d.missingResourceScopes)) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
    }
    const id = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId: id } }, {
      mergeWithLastSubmission: true,
    });
    return;
  }
  json(res, 400, { error: 'invalid_request', error_description: `unexpected prompt ${prompt.name}` });
}

const COURSES = [
  { id: 'c-101', title: 'Reading the TAIEX', level: 'beginner', lessons: 12, published: true },
  { id: 'c-205', title: 'Futures and options on TAIFEX', level: 'intermediate', lessons: 18, published: true },
  { id: 'c-310', title: 'Backtesting without fooling yourself', level: 'advanced', lessons: 9, published: true },
  { id: 'c-400', title: 'Draft: market microstructure', level: 'advanced', lessons: 3, published: false },
];

// path -> { scope needed when a token is presented, handler(token|null) }
const API = {
  '/api/courses': {
    scope: 'courses:read',
    handle: (token) => (token ? COURSES : COURSES.filter((c) => c.published)),
  },
  '/api/account': {
    scope: 'account:read',
    handle: (token) => (token
      ? { sub: token.accountId, email: USER.email, plan: 'student', anonymous: false }
      : { anonymous: true }),
  },
};

const OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'Course platform API (test double)', version: '1.0.0' },
  components: {
    securitySchemes: {
      oauth: {
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: `${issuer}/oauth/authorize`,
            tokenUrl: `${issuer}/api/oauth/token`,
            scopes: Object.fromEntries(API_SCOPES.map((s) => [s, s])),
          },
        },
      },
    },
  },
  paths: {
    '/api/courses': {
      get: {
        operationId: 'listCourses',
        summary: 'List courses',
        security: [{}, { oauth: ['courses:read'] }],
        responses: { 200: { description: 'a list of courses' } },
      },
    },
    '/api/courses/{course_id}': {
      get: {
        operationId: 'getCourse',
        summary: 'One course',
        parameters: [{ name: 'course_id', in: 'path', required: true, schema: { type: 'string' } }],
        security: [{}, { oauth: ['courses:read'] }],
        responses: { 200: { description: 'a course' }, 404: { description: 'no such course' } },
      },
    },
    '/api/account': {
      get: {
        operationId: 'getAccount',
        summary: 'The signed-in account',
        security: [{}, { oauth: ['account:read'] }],
        responses: { 200: { description: 'the account' } },
      },
    },
  },
};

function challenge(res, status, error, description, scope) {
  let header = `Bearer error="${error}", error_description="${description}"`;
  if (scope) header += `, scope="${scope}"`;
  header += `, resource_metadata="${RESOURCE_METADATA}"`;
  json(res, status, { error, error_description: description }, { 'www-authenticate': header });
}

async function handleApi(req, res, url) {
  let route = API[url.pathname];
  let courseId;
  const m = url.pathname.match(/^\/api\/courses\/([^/]+)$/);
  if (!route && m) {
    courseId = decodeURIComponent(m[1]);
    route = { scope: 'courses:read', handle: () => COURSES.find((c) => c.id === courseId) };
  }
  if (!route) return json(res, 404, { error: 'not_found' });
  if (req.method !== 'GET') return json(res, 405, { error: 'method_not_allowed' });

  const auth = req.headers.authorization;
  let token = null;
  if (auth) {
    const [scheme, value] = auth.split(' ', 2);
    if (scheme.toLowerCase() !== 'bearer' || !value) {
      return challenge(res, 401, 'invalid_token', 'malformed Authorization header');
    }
    token = await provider.AccessToken.find(value);
    if (!token || token.isExpired) {
      return challenge(res, 401, 'invalid_token', 'the access token is invalid, expired or revoked');
    }
    const aud = Array.isArray(token.aud) ? token.aud : [token.aud];
    if (!aud.includes(RESOURCE)) {
      return challenge(res, 401, 'invalid_token', 'the access token is not for this resource');
    }
    if (!token.scopes.has(route.scope)) {
      return challenge(res, 403, 'insufficient_scope', `this call needs the ${route.scope} scope`, route.scope);
    }
  }
  const body = route.handle(token);
  if (body === undefined) return json(res, 404, { error: 'not_found' });
  return json(res, 200, body);
}

// Echo mode (POST /__test__/echo?on=1): a careless authorization server and API that put the
// request they got (form body, Authorization header) into their error texts -- refresh
// tokens, client secrets and bearer tokens included. The client must scrub them.
let echoErrors = false;
const ECHO_PATHS = new Set(['/api/oauth/token', '/api/oauth/revoke', '/api/oauth/introspect']);

function echoError(req, res, url) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const form = Buffer.concat(chunks).toString('utf8');
    const auth = req.headers.authorization || '';
    if (url.pathname.startsWith('/api/oauth/')) {
      return json(res, 400, {
        error: 'invalid_grant',
        error_description: `cannot accept ${form} (authorization: ${auth})`,
      });
    }
    const value = auth.replace(/^Bearer /i, '');
    const header = `Bearer error="invalid_token", error_description="unknown token ${value}"`;
    return json(res, 401, { error: 'invalid_token', error_description: `unknown ${auth}`, token: value },
      { 'www-authenticate': header });
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, issuer);
  const done = (err) => {
    console.error(`error handling ${req.method} ${url.pathname}: ${err?.message || err}`);
    if (!res.headersSent) json(res, 500, { error: 'server_error' });
  };
  try {
    if (url.pathname === '/api/oauth/token' && req.method === 'POST') stats.token_requests += 1;
    if (url.pathname === '/api/oauth/register' && req.method === 'POST') stats.registrations += 1;
    if (url.pathname === '/api/oauth/revoke' && req.method === 'POST') stats.revocations += 1;
    if (url.pathname === '/api/oauth/introspect' && req.method === 'POST') stats.introspections += 1;

    if (url.pathname === '/__test__/stats') return json(res, 200, stats);
    if (url.pathname === '/__test__/echo' && req.method === 'POST') {
      echoErrors = url.searchParams.get('on') === '1';
      return json(res, 200, { echo: echoErrors });
    }
    if (echoErrors && (ECHO_PATHS.has(url.pathname) || url.pathname.startsWith('/api/courses'))) {
      return echoError(req, res, url);
    }
    if (String(req.headers['user-agent'] || '').startsWith('marketframe-academy/')) {
      const key = `${req.method} ${url.pathname}`;
      stats.client_requests[key] = (stats.client_requests[key] || 0) + 1;
    }
    if (url.pathname.startsWith('/interaction/')) return handleInteraction(req, res).catch(done);
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      // RFC 8414 metadata: the provider's own discovery document, served at the 8414 path.
      req.url = '/.well-known/openid-configuration';
      return callback(req, res);
    }
    if (url.pathname === '/.well-known/oauth-protected-resource') {
      return json(res, 200, {
        resource: RESOURCE,
        authorization_servers: [issuer],
        scopes_supported: API_SCOPES,
        bearer_methods_supported: ['header'],
        resource_name: 'Course platform API (test double)',
      });
    }
    if (url.pathname === '/openapi.json') return json(res, 200, OPENAPI);
    if (url.pathname.startsWith('/api/') && !url.pathname.startsWith('/api/oauth/')) {
      return handleApi(req, res, url).catch(done);
    }
    return callback(req, res);
  } catch (err) {
    return done(err);
  }
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`READY ${issuer}\n`);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // keep-alive sockets would otherwise hold close() open
  });
}
