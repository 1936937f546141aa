import { type KeyResolver, RECEIPT_KEY_TYP, type Receipt, type ReceiptKeyClaims } from '@mandate/protocol';
import type { Clock } from '../../clock.ts';
import { seconds } from '../../clock.ts';
import { credentialKeyJwk } from '../../crypto/webauthn.ts';
import type { AgentRecord, AuthzRequestRecord, ReceiptRecord, Store } from '../../store/ports/index.ts';
import { badRequest, conflict, notFound, unauthorized } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { bearerFiled, passBearer } from '../verification/pass-bearer.ts';

export interface ReceiptsDeps {
  store: Store;
  clock: Clock;
  /** The service's signing keys: the attestation is signed like every service token; a site's pass is checked with them. */
  keys: { sign(payload: Record<string, unknown>, typ: string): Promise<string>; resolver: KeyResolver };
  agents: { verifyJwt(token: unknown, agentId: string): Promise<AgentRecord> };
  /** The service's base URL: the attestation's `iss`. */
  issuer: string;
}

const NOT_FOUND = 'no receipt for this txn_id: unknown, or filed by another agent';
const SITE_NOT_FOUND = 'no receipt for this txn_id and pass: unknown, no longer held, or not a step-up filed with a pass of this agent, access and site';

/**
 * Receipts for the agent that filed the request (decisions §29): the stored assertion with the values
 * its challenge commits to, the passkey's public key, and an attestation signed by the service's
 * keys binding that key to the person. The attestation is made when asked for, from the passkey as
 * stored now, so a passkey the owner has removed since can no longer be attested.
 */
export class Receipts {
  constructor(private readonly d: ReceiptsDeps) {}

  /** GET /api/v1/receipts/{txn_id} with `X-Agent-JWT`. */
  async forAgent(txnId: string, agentJwt: unknown): Promise<Receipt> {
    if (!looksLikeId('t', txnId)) throw badRequest('txn_id must be a request id (t_…)');
    const agent = await this.d.agents.verifyJwt(agentJwt, claimedAgent(agentJwt));
    const stored = await this.d.store.receipts.get(txnId);
    if (stored !== undefined && stored.agentId === agent.id) return this.receiptOf(stored);
    const request = stored === undefined ? await this.d.store.authzRequests.byId(txnId) : undefined;
    if (request === undefined || request.agentId !== agent.id) throw notFound(NOT_FOUND);
    return this.noReceipt(request);
  }

  /**
   * GET /api/v1/receipts/{txn_id} with `Authorization: Bearer <pass>`: the site that filed a site
   * step-up, by the rule of its poll (a live pass of the same agent, grant and site). The request
   * must still be held (a week after it ended): a site fetches its receipt when the owner approves.
   */
  async forSite(txnId: string, pass: string | undefined): Promise<Receipt> {
    if (!looksLikeId('t', txnId)) throw badRequest('txn_id must be a request id (t_…)');
    const bearer = await passBearer(this.d, pass);
    const request = await this.d.store.authzRequests.byId(txnId);
    if (request === undefined || !bearerFiled(bearer, request)) throw notFound(SITE_NOT_FOUND);
    const stored = await this.d.store.receipts.get(txnId);
    return stored !== undefined ? this.receiptOf(stored) : this.noReceipt(request);
  }

  /** Why a request the caller may read has no receipt: always a 409. */
  private noReceipt(request: AuthzRequestRecord): never {
    if (request.kind !== 'stepup' && request.kind !== 'agent_approval') throw conflict('no receipt: only step-ups and agent approvals leave one');
    if (request.status === 'pending') throw conflict('no receipt yet: the owner has not answered; poll the request and ask again once it is approved');
    if (request.status === 'denied' || request.status === 'expired') throw conflict(`no receipt: the request was ${request.status}`);
    throw conflict('no receipt: the request was approved without a passkey assertion');
  }

  /** The receipt of a stored record, with a fresh attestation of its passkey. */
  async receiptOf(r: ReceiptRecord): Promise<Receipt> {
    const passkey = await this.d.store.passkeys.byCredentialId(r.credentialId);
    if (passkey === undefined || passkey.userId !== r.userId) throw conflict('no receipt: the passkey that approved was removed by its owner, so the service can no longer attest its key');
    const credentialKey = credentialKeyJwk(passkey.publicKey);
    if (credentialKey === null) throw conflict('no receipt: the passkey\'s key is of a kind receipts do not describe');
    const claims: ReceiptKeyClaims = {
      iss: this.d.issuer,
      type: 'receipt-key',
      iat: seconds(this.d.clock.now()),
      user: r.userId,
      credential_id: r.credentialId,
      credential_key: credentialKey,
      registered_at: new Date(passkey.createdAt).toISOString(),
    };
    return {
      v: 1,
      txn: r.txnId,
      aud: r.site,
      action: r.action,
      details_digest: r.detailsDigest,
      user: r.userId,
      nonce: r.nonce,
      approved_at: new Date(r.approvedAt).toISOString(),
      webauthn: { credential_id: r.credentialId, authenticator_data: r.authenticatorData, client_data_json: r.clientDataJson, signature: r.signature },
      credential_key: credentialKey,
      attestation: await this.d.keys.sign({ ...claims }, RECEIPT_KEY_TYP),
    };
  }
}

/** The agent id an agent JWT claims (`iss`), checked by verifyJwt; '' when it names none. */
function claimedAgent(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0) throw unauthorized('send the header X-Agent-JWT: an agent JWT of the agent that filed the request');
  try {
    // Only read here to know whose key to check it with; verifyJwt checks the signature and that iss = sub.
    const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const iss = typeof claims === 'object' && claims !== null ? (claims as { iss?: unknown }).iss : undefined;
    return typeof iss === 'string' ? iss : '';
  } catch {
    return '';
  }
}
