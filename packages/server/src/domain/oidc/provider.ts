import { type AuthorizeInput, authorize } from './authorize.ts';
import type { OidcDeps } from './deps.ts';
import { tokenEndpoint } from './token-endpoint.ts';
import type { TokenResponse, Identity } from './tokens.ts';
import { userinfo } from './userinfo.ts';
import { type WaitStatus, waitStatus } from './wait.ts';
import { type Introspection, introspect, revoke } from './revoke-introspect.ts';

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

  token(authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<TokenResponse> {
    return tokenEndpoint(this.deps, authorization, form, repeated);
  }

  revoke(authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<void> {
    return revoke(this.deps, authorization, form, repeated);
  }

  introspect(authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<Introspection> {
    return introspect(this.deps, authorization, form, repeated);
  }

  userinfo(authorization: string | undefined): Promise<Identity> {
    return userinfo(this.deps, authorization);
  }
}
