import { type AuthorizeInput, authorize } from './authorize.ts';
import { type BcAuthorizeAnswer, bcAuthorize } from './ciba.ts';
import type { OidcDeps } from './deps.ts';
import { type TokenRequest, tokenEndpoint } from './token-endpoint.ts';
import type { Identity, TokenResponse } from './tokens.ts';
import { type UserinfoRequest, userinfo } from './userinfo.ts';
import { type WaitStatus, waitStatus } from './wait.ts';
import { type Introspection, introspect, revoke } from './revoke-introspect.ts';
import { type RegisteredClient, registerClient } from './registration.ts';

/** The OIDC provider's endpoints as domain calls (decisions §12, §18); no HTTP here. */
export class OidcProvider {
  constructor(readonly deps: OidcDeps) {}

  get issuer(): string {
    return this.deps.issuer;
  }

  /** The address to send the agent to (302). */
  authorize(input: AuthorizeInput): Promise<string> {
    return authorize(this.deps, input);
  }

  waitStatus(txn: string, k: string): Promise<WaitStatus> {
    return waitStatus(this.deps, txn, k);
  }

  token(req: TokenRequest): Promise<TokenResponse> {
    return tokenEndpoint(this.deps, req);
  }

  bcAuthorize(authorization: string | undefined, form: Map<string, string>, repeated: string[], ip: string | null): Promise<BcAuthorizeAnswer> {
    return bcAuthorize(this.deps, authorization, form, repeated, ip);
  }

  revoke(authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<void> {
    return revoke(this.deps, authorization, form, repeated);
  }

  introspect(authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<Introspection> {
    return introspect(this.deps, authorization, form, repeated);
  }

  /** RFC 7591 registration of a public client (decisions §28). */
  register(body: unknown, ip: string): Promise<RegisteredClient> {
    return registerClient(this.deps, body, ip);
  }

  userinfo(req: UserinfoRequest): Promise<Omit<Identity, 'scopes'>> {
    return userinfo(this.deps, req);
  }
}
