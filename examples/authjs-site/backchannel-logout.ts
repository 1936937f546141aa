// OpenID Connect Back-Channel Logout 1.0 receiver: when the owner revokes the agent's access or
// removes the agent, Mandate POSTs a `logout_token` here, and the session of that sign-in ends.
import express, { type RequestHandler } from 'express';
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

class Refused extends Error {}

export function backchannelLogout(opts: { issuer: string; clientId: string; endSession: (sid: string) => void }): RequestHandler[] {
  const seen = new Map<string, number>(); // jti -> its exp (ms): each logout token is taken once
  let keys: Promise<JWTVerifyGetKey> | undefined;
  // Mandate's signing keys, from the jwks_uri of its discovery document (fetched again on a new kid).
  const mandateKeys = () =>
    (keys ??= fetch(`${opts.issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) })
      .then((res) => res.json() as Promise<{ jwks_uri: string }>)
      .then((meta) => createRemoteJWKSet(new URL(meta.jwks_uri)))
      .catch((e: unknown) => {
        keys = undefined; // try again at the next logout
        throw e;
      }));

  async function verify(token: string): Promise<string> {
    const { payload } = await jwtVerify(token, await mandateKeys(), {
      algorithms: ['ES256'], // never "none", never an HMAC
      typ: 'logout+jwt',
      issuer: opts.issuer,
      audience: opts.clientId,
      maxTokenAge: '2 minutes', // iat is recent
      clockTolerance: 5,
      requiredClaims: ['iat', 'exp', 'jti', 'sid'],
    });
    const event = (payload.events as Record<string, unknown> | undefined)?.[LOGOUT_EVENT];
    if (typeof event !== 'object' || event === null) throw new Refused('events must hold the back-channel logout event');
    if ('nonce' in payload) throw new Refused('a logout token carries no nonce');
    if (typeof payload.sid !== 'string' || payload.sid === '') throw new Refused('sid missing');
    const now = Date.now();
    for (const [jti, exp] of seen) if (exp < now - 60_000) seen.delete(jti);
    if (typeof payload.jti !== 'string' || seen.has(payload.jti)) throw new Refused('jti already used');
    seen.set(payload.jti, (payload.exp ?? 0) * 1000);
    return payload.sid;
  }

  const receive: RequestHandler = async (req, res) => {
    res.set('cache-control', 'no-store');
    const token: unknown = req.body?.logout_token;
    try {
      if (typeof token !== 'string') throw new Refused('send one logout_token as application/x-www-form-urlencoded');
      const sid = await verify(token);
      opts.endSession(sid);
      console.log(`back-channel logout: sign-in ${sid} ended`);
      res.status(200).end();
    } catch (e) {
      // A bad token is a 400 (the spec's answer; Mandate does not send it again). Anything else
      // (Mandate's keys could not be fetched) is a 503, and Mandate tries again later.
      const bad = e instanceof Refused || (e instanceof errors.JOSEError && !(e instanceof errors.JWKSTimeout));
      console.log(`back-channel logout refused: ${e instanceof Error ? e.message : String(e)}`);
      res.status(bad ? 400 : 503).json({ error: bad ? 'invalid_request' : 'temporarily_unavailable', error_description: e instanceof Error ? e.message : String(e) });
    }
  };
  return [express.urlencoded({ extended: false, limit: '16kb' }), receive];
}
