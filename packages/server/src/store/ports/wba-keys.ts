/**
 * Ports for Web Bot Auth keys (decisions §22): each agent may publish one Ed25519 public key in a
 * key directory at its address. Public material only. Times are epoch milliseconds.
 */

/** The directory response's signature headers the agent made with the key (RFC 9421). */
export interface WbaProof {
  contentDigest: string;
  signatureInput: string;
  signature: string;
  /** When the signature's `expires` passes. */
  expiresAt: number;
}

export interface WbaKeyRecord {
  agentId: string;
  userId: string;
  /** `a-<12 hex>`: the agent's address label, the same across key changes. */
  label: string;
  /** RFC 7638 thumbprint of the key. */
  kid: string;
  /** The Ed25519 public key (base64url). */
  x: string;
  createdAt: number;
  updatedAt: number;
  /** The proof for this key, or null until the agent uploads one. */
  proof: WbaProof | null;
}

export type WbaPutOutcome = 'stored' | 'taken';

export interface WbaKeysRepo {
  /**
   * Makes `kid` the agent's key, replacing its previous one (and that key's proof), unless the key
   * belongs to another agent: `taken`. The unique index on `kid` decides between racing agents.
   */
  put(k: Omit<WbaKeyRecord, 'createdAt' | 'updatedAt' | 'proof'>, now: number): Promise<WbaPutOutcome>;
  byAgent(agentId: string): Promise<WbaKeyRecord | undefined>;
  byLabel(label: string): Promise<WbaKeyRecord | undefined>;
  /** Stores the proof if the agent's key is still `kid` (one conditional UPDATE: a replaced key's proof is refused). */
  setProof(agentId: string, kid: string, proof: WbaProof): Promise<boolean>;
  /** The owner's keys (the data export). */
  listForUser(userId: string): Promise<WbaKeyRecord[]>;
  /** Account deletion: the owner's keys. */
  deleteForUser(userId: string): Promise<number>;
}
