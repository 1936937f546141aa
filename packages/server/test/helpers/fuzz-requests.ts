import { request as httpRequest } from 'node:http';
import fc from 'fast-check';

/**
 * Generated malformed requests for the fuzz test: every route of the OpenAPI description, with
 * wrong methods, bad ids, bad query values, bad headers and credentials, and bodies of every wrong
 * shape (wrong types, huge, deeply nested, NUL and odd Unicode, invalid UTF-8, not JSON at all).
 * Valid credentials and ids are mixed in, so that requests get past authentication and reach the
 * deeper checks. Sent with node:http on a fresh connection each, so that one request the server
 * closes cannot spoil the next.
 */

export interface Route {
  method: string;
  /** The OpenAPI path template, e.g. /api/agents/{agent_id}. */
  path: string;
  query: string[];
  bodyProps: string[];
}

export interface OpenApi {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>>;
}

export function routesOf(spec: OpenApi): Route[] {
  const routes: Route[] = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      routes.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        bodyProps: Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {}),
      });
    }
  }
  return routes;
}

/** Real values the fuzzer mixes in: a live session, an agent and its JWT, a grant's site. */
export interface Genuine {
  sessionToken: string;
  agentId: string;
  agentJwt: string;
  userId: string;
  site: string;
  /** A configured identity provider's name, for the {provider} parameter of the /oauth/ routes. */
  provider?: string;
  /** A pending access request of the owner, for {txn_id}. */
  txnId?: string;
  /** A live pass of the agent: the site step-up routes take it as `access_token` and `Authorization: Bearer`. */
  pass?: string;
}

export interface FuzzRequest {
  method: string;
  /** Path and query, already percent-encoded (possibly badly, on purpose). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Percent-encodes UTF-8 bytes (lone surrogates become U+FFFD, as a client would send them). */
export function percentEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

const SPECIALS = ['', ' ', '\u0000', 'a\u0000b', '\u202e', '\u200b', '\ud800', '\uffff', '%00', '../../etc/passwd', "' OR 1=1 --", '{{7*7}}', '<script>alert(1)</script>', 'null', 'NaN', '-0', '1e309', '💩'.repeat(60), 'ag_', 't_', 'gr_', 'u_'];

/** Strings that have broken parsers before. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 4, arbitrary: fc.constantFrom(...SPECIALS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }).map((s) => s + 'x'.repeat(3000)) },
);

const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1, 0, 0.5, Number.MAX_VALUE, Number.MIN_VALUE),
);

/** Any JSON value of a wrong shape, nested a little. */
export const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A header value Node will send: bytes 0x20..0xFF without DEL; now and then very long. */
const headerText: fc.Arbitrary<string> = fc.oneof(
  { weight: 40, arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 200 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => 'h'.repeat(n)) },
);

/** JWT-shaped strings: three segments with odd headers and claims, unsigned or badly signed. */
const fakeJwt = (g: Genuine): fc.Arbitrary<string> =>
  fc.tuple(
    fc.record({ alg: fc.oneof(fc.constantFrom('ES256', 'none', 'HS256', 'RS256', 'ES512'), nastyString), typ: fc.oneof(fc.constantFrom('JWT', 'at+jwt', 'dpop+jwt', 'stepup+jwt'), nastyString), kid: nastyValue, jwk: nastyValue }, { requiredKeys: ['alg'] }),
    fc.oneof(
      fc.record({ iss: fc.oneof(fc.constant(g.agentId), nastyValue), sub: fc.oneof(fc.constant(g.agentId), nastyValue), aud: nastyValue, exp: nastyValue, iat: nastyValue, jti: nastyValue, htm: nastyValue, htu: nastyValue, ath: nastyValue, type: nastyValue, cnf: nastyValue }, { requiredKeys: [] }),
      nastyValue,
    ),
    fc.oneof(fc.constant(''), fc.base64String({ maxLength: 100 }), headerText),
  ).map(([h, p, sig]) => `${b64(h)}.${b64(p)}.${sig}`);

const credential = (g: Genuine): fc.Arbitrary<string> => fc.oneof(fc.constant(g.agentJwt), fakeJwt(g), headerText);

const headersArb = (g: Genuine): fc.Arbitrary<Record<string, string>> =>
  fc.record(
    {
      authorization: fc.oneof(fc.constant(`Bearer ${g.sessionToken}`), fc.constant(`Bearer ${g.pass ?? g.sessionToken}`), headerText.map((t) => `Bearer ${t}`), headerText, credential(g).map((t) => `DPoP ${t}`)),
      cookie: fc.oneof(fc.constant(`session=${g.sessionToken}`), headerText.map((t) => `session=${t}`), headerText),
      'x-agent-jwt': credential(g),
      dpop: credential(g),
      'x-service-stepup': credential(g),
      'if-none-match': headerText,
      origin: fc.oneof(fc.constantFrom('null', 'https://evil.example', 'http://localhost'), headerText),
      'sec-fetch-site': fc.oneof(fc.constantFrom('cross-site', 'same-origin', 'none'), headerText),
      'x-forwarded-for': headerText,
      accept: headerText,
      'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', '*'),
    },
    { requiredKeys: [] },
  );

/** Mostly JSON, so that most bodies reach the routes; now and then something else. */
const contentTypeArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  { weight: 3, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '*/*', 'application/json;;;', 'application/merge-patch+json', '') },
  { weight: 1, arbitrary: headerText },
);

/** A details digest (decisions §29) and its near misses: wrong length, padding, a last character out of canonical form, hex. */
const GOOD_DIGEST = 'p4S9sS3L3hZ0hJ0tqv3Z8bYQy2a4rM7pN1eW6kD5cXg';
const digestLike: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(GOOD_DIGEST, GOOD_DIGEST.slice(0, 42), `${GOOD_DIGEST}A`, `${GOOD_DIGEST.slice(0, 42)}=`, `${GOOD_DIGEST.slice(0, 42)}h`, `${GOOD_DIGEST.slice(0, 42)}+`, 'a'.repeat(64)),
  nastyValue,
);

/** `details` bound to an approval: whole, with a field of any wrong shape, with the page facts of an agent approval, with extras. */
const detailsLike: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ summary: fc.oneof(fc.constant('Pay 12.00 EUR\nto ACME'), nastyString, nastyValue), digest: digestLike, label: nastyValue, amount: nastyValue, text_digests: nastyValue, extra: nastyValue }, { requiredKeys: [] }),
  nastyValue,
);

/** A value for a body property: a genuine one, one of the right kind but wrong, or any wrong shape. */
const propValue = (g: Genuine, name: string): fc.Arbitrary<unknown> => {
  const genuine: Record<string, unknown> = { agent_id: g.agentId, agent_jwt: g.agentJwt, site: g.site, user_id: g.userId, access_token: g.pass ?? g.agentJwt, stepup_token: g.agentJwt, dpop: g.agentJwt, scopes: ['list'], user_info: [], method: 'GET', url: `https://${g.site}/x`, approve: true, action: 'pay', resource: `https://${g.site}/mcp`, token_type: 'DPoP' };
  if (name === 'details') return fc.oneof({ weight: 3, arbitrary: detailsLike }, { weight: 1, arbitrary: nastyValue });
  if (name === 'details_digest') return digestLike;
  return fc.oneof({ weight: 1, arbitrary: fc.constant(genuine[name] ?? 'x') }, { weight: 3, arbitrary: nastyValue });
};

const objectBody = (g: Genuine, props: string[]): fc.Arbitrary<string> =>
  fc.subarray(props).chain((keys) =>
    fc.tuple(fc.tuple(...keys.map((k) => propValue(g, k))), fc.dictionary(nastyString, nastyValue, { maxKeys: 2 })).map(([values, extra]) =>
      JSON.stringify({ ...extra, ...Object.fromEntries(keys.map((k, i) => [k, values[i]])) })));

const bodyArb = (g: Genuine, route: Route): fc.Arbitrary<Buffer> =>
  fc.oneof(
    { weight: 6, arbitrary: objectBody(g, route.bodyProps).map((s) => Buffer.from(s)) },
    { weight: 2, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 50, max: 30_000 }), fc.constantFrom('[', '{"a":')).map(([n, open]) => Buffer.from(open.repeat(n) + (open === '[' ? ']' : '}').repeat(n))) },
    { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 200_000 }).map((n) => Buffer.from(JSON.stringify({ [route.bodyProps[0] ?? 'x']: 'x'.repeat(n) }))) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((s) => Buffer.from(s)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.constantFrom('', '{}', '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}', '{"a":1,"a":2}', '\ufeff{}', 'null').map((s) => Buffer.from(s)) },
  );

const idArb = (g: Genuine): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(g.agentId, ...(g.txnId ? [g.txnId] : []), `ag_${'a'.repeat(26)}`, `t_${'b'.repeat(26)}`, `gr_${'c'.repeat(26)}`, `dev_${'d'.repeat(26)}`).map(percentEncode),
    nastyString.map(percentEncode),
    fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%2F', '..%2F..', '.', '..', 'a'.repeat(400), '%C0%AF'),
  );

const queryArb = (route: Route): fc.Arbitrary<string> =>
  fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...route.query, 'before', 'limit', 'email', 'agent_id', 'site', '__proto__'), nastyString),
      fc.oneof(nastyString, fc.constantFrom('-1', '0', '1e308', 'NaN', 'Infinity', '9223372036854775808', '0x10', ' 5', '5 ', '[]', '{}')),
    ),
    { maxLength: 4 },
  ).map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')}` : ''));

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

/** One generated request for `routes`. */
export function requestArb(routes: Route[], g: Genuine): fc.Arbitrary<FuzzRequest> {
  const known = fc.constantFrom(...routes).chain((route) =>
    fc.record({
      // Mostly the route's own method; sometimes another one on the same path.
      method: fc.oneof({ weight: 4, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
      // Mostly the configured provider for {provider} (else every /oauth/ request stops at "unknown provider").
      path: fc.tuple(fc.array(idArb(g), { minLength: 2, maxLength: 2 }), queryArb(route), fc.nat(3)).map(([ids, q, pick]) => {
        let i = 0;
        return route.path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === 'provider' && g.provider && pick > 0 ? g.provider : ids[i++ % ids.length] ?? 'x')) + q;
      }),
      headers: headersArb(g),
      contentType: contentTypeArb,
      body: fc.option(bodyArb(g, route), { freq: 8 }),
    }),
  );
  const unknown = fc.record({
    method: fc.constantFrom(...METHODS),
    path: fc.array(nastyString.map(percentEncode), { minLength: 1, maxLength: 4 }).map((segs) => `/api/${segs.join('/')}`),
    headers: headersArb(g),
    contentType: contentTypeArb,
    body: fc.option(bodyArb(g, { method: 'POST', path: '/', query: [], bodyProps: [] })),
  });
  return fc.oneof({ weight: 9, arbitrary: known }, { weight: 1, arbitrary: unknown }).map(({ method, path, headers, contentType, body }) => {
    const withBody = body !== null && method !== 'GET' && method !== 'HEAD';
    return {
      method,
      path,
      headers: { ...headers, ...(withBody && contentType ? { 'content-type': contentType } : {}) },
      ...(withBody ? { body } : {}),
    };
  });
}

export interface FuzzAnswer {
  status: number;
  body: string;
}

/**
 * Sends one request on its own connection. Answers the status and body, `'refused-locally'` when
 * Node's client will not send it (a header or path it considers invalid), or throws when the
 * server drops the connection or does not answer within `timeoutMs`.
 */
export function sendRaw(port: number, r: FuzzRequest, timeoutMs = 15_000): Promise<FuzzAnswer | 'refused-locally'> {
  return new Promise((resolve, reject) => {
    let req;
    try {
      req = httpRequest({ host: '127.0.0.1', port, method: r.method, path: r.path, headers: { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) }, agent: false });
    } catch {
      return resolve('refused-locally');
    }
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('response', (res) => {
      // An event stream (GET /api/v1/revocation/events) never ends: its status is the answer.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode ?? 0, body: '' });
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      // The server may answer (413, 431) and close before it read everything we sent: that
      // shows as EPIPE/ECONNRESET while writing the body. Such a request is retried without body by
      // the caller's next run; here it is reported for the caller to decide.
      reject(e);
    });
    try {
      req.end(r.body);
    } catch {
      resolve('refused-locally');
    }
  });
}
