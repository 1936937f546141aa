/**
 * Verification of the provider's own access tokens (JWT `typ at+jwt`, ES256, RFC 9068) for
 * /oidc/userinfo. Only ES256 with a published `kid` is accepted: `alg: none`, HMAC or a key named
 * in the token itself never verify.
 */
import { jwtVerify, type JWTPayload } from 'jose';
import type { SigningKeys } from './signing-keys.ts';

export const ACCESS_TOKEN_TYP = 'at+jwt';

export async function verifyAccessToken(keys: SigningKeys, token: string, issuer: string, nowMs: number): Promise<JWTPayload | undefined> {
  if (token.length === 0 || token.length > 4096) return undefined;
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = typeof header.kid === 'string' ? await keys.verificationKey(header.kid) : undefined;
        if (!key) throw new Error('unknown kid');
        return key;
      },
      { algorithms: ['ES256'], typ: ACCESS_TOKEN_TYP, issuer, audience: issuer, currentDate: new Date(nowMs), requiredClaims: ['exp', 'iat', 'sub', 'sid'] },
    );
    return payload;
  } catch {
    return undefined;
  }
}
