import { createHash } from 'node:crypto';
import type { RevokedAgent, RevokedGrant } from '@mandate/protocol';
import { breathe } from './breathe.ts';

/**
 * The revocation list as bytes, written once per snapshot in steps with the event loop free between
 * them. Serialising, hashing and base64url-encoding 30 000 entries in one go held the event loop for
 * about half a second (JSON.stringify of the claims three times: the ETag, the signed payload in
 * jose, the body); here each step serialises ENTRIES_PER_STEP entries and feeds them to the ETag's
 * hash and to the base64url of the signed payload at once, and no step copies the whole list. A new
 * signature (a new `iat`) then costs one more hash of the encoded payload, in steps too, and no
 * serialisation or copy.
 */
export interface SnapshotText {
  /** `JSON.stringify(revoked_agents)`, UTF-8, in pieces joined in order. */
  agents: Buffer[];
  /** `JSON.stringify(revoked_grants)`, UTF-8, in pieces joined in order. */
  grants: Buffer[];
  /** Strong ETag: SHA-256 of `JSON.stringify({rev_seq, revoked_agents, revoked_grants})`. */
  etag: string;
  /**
   * base64url of `"revoked_agents":[...],"revoked_grants":[...]}` in pieces: the end of the signed
   * payload, which does not change with `iat` (see payloadHead).
   */
  payloadTail: Buffer[];
}

/** Entries serialised per step (about 100 bytes each). */
const ENTRIES_PER_STEP = 1000;

export async function snapshotText(revSeq: number, agents: readonly RevokedAgent[], grants: readonly RevokedGrant[]): Promise<SnapshotText> {
  // The ETag hashes byte for byte what JSON.stringify({rev_seq, revoked_agents, revoked_grants}) hashed
  // before, so nodes of this and the previous release answer the same ETag for the same list.
  const hash = createHash('sha256').update(`{"rev_seq":${revSeq},`);
  const tail = new Base64url();
  const write = (piece: Buffer, into?: Buffer[]) => {
    hash.update(piece);
    tail.write(piece);
    into?.push(piece);
  };
  const text: SnapshotText = { agents: [], grants: [], etag: '', payloadTail: tail.out };
  write(Buffer.from('"revoked_agents":'));
  await listJson(agents, (piece) => write(piece, text.agents));
  write(Buffer.from(',"revoked_grants":'));
  await listJson(grants, (piece) => write(piece, text.grants));
  write(Buffer.from('}'));
  tail.end();
  text.etag = `"${hash.digest('base64url')}"`;
  return text;
}

/**
 * The start of the signed payload: `{"type":"revocation","iss":...,"iat":...,"rev_seq":...,` padded
 * with JSON whitespace to a multiple of 3 bytes, so that its base64url followed by `payloadTail` is
 * the base64url of the whole payload (base64 maps each 3 bytes to 4 characters on their own).
 */
export function payloadHead(iss: string, iat: number, revSeq: number): Buffer {
  const head = `{"type":"revocation","iss":${JSON.stringify(iss)},"iat":${iat},"rev_seq":${revSeq},`;
  const pad = (3 - (Buffer.byteLength(head) % 3)) % 3;
  return Buffer.from(Buffer.from(head + ' '.repeat(pad)).toString('base64url'), 'ascii');
}

/** The answer body of `GET /api/v1/revocation`, `{signature, rev_seq, revoked_agents, revoked_grants}`, in pieces. */
export function bodyOf(jws: readonly Buffer[], revSeq: number, text: SnapshotText): Buffer[] {
  return [
    Buffer.from('{"signature":"'),
    ...jws,
    Buffer.from(`","rev_seq":${revSeq},"revoked_agents":`),
    ...text.agents,
    Buffer.from(',"revoked_grants":'),
    ...text.grants,
    Buffer.from('}'),
  ];
}

/** JSON.stringify(list), written ENTRIES_PER_STEP entries at a time, each step's bytes to `emit`. */
async function listJson(list: readonly object[], emit: (piece: Buffer) => void): Promise<void> {
  if (list.length === 0) return emit(Buffer.from('[]'));
  for (let i = 0; i < list.length; i += ENTRIES_PER_STEP) {
    const json = JSON.stringify(list.slice(i, i + ENTRIES_PER_STEP));
    // Each step's array without its brackets; the steps joined by commas, in one pair of brackets.
    emit(Buffer.from(`${i === 0 ? '[' : ','}${json.slice(1, -1)}${i + ENTRIES_PER_STEP >= list.length ? ']' : ''}`));
    if (i + ENTRIES_PER_STEP < list.length) await breathe();
  }
}

/**
 * base64url of bytes written in pieces of any length, as ASCII pieces: each piece is encoded up to a
 * multiple of 3 bytes, the 0 to 2 bytes left over go before the next one.
 */
class Base64url {
  readonly out: Buffer[] = [];
  private carry: Buffer = Buffer.alloc(0);
  write(piece: Buffer): void {
    const bytes = this.carry.length === 0 ? piece : Buffer.concat([this.carry, piece]);
    const whole = bytes.length - (bytes.length % 3);
    if (whole > 0) this.out.push(Buffer.from(bytes.subarray(0, whole).toString('base64url'), 'ascii'));
    this.carry = Buffer.from(bytes.subarray(whole));
  }
  end(): void {
    if (this.carry.length > 0) this.out.push(Buffer.from(this.carry.toString('base64url'), 'ascii'));
    this.carry = Buffer.alloc(0);
  }
}
