import { randomInt } from 'node:crypto';
import { sha256Hex } from '../../crypto/random.ts';
import type { AgentRecord, ChallengesRepo } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest } from '../errors.ts';
import { checkClient } from '../client-limit.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { agentPublicKey } from './agent-key.ts';
import { AGENT_NAME_MAX, type Agents } from './agents.ts';

/** No 0/O, 1/I/L: read off a phone and typed on another machine without doubt. 31 symbols. */
export const PAIRING_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/**
 * 8 symbols (31^8, about 2^39.6) live 10 minutes and are used once; redeeming is limited per client
 * (10 per IPv4 address or IPv6 /64, 30 per IPv6 /48: client-address.ts), so guessing a live code is
 * hopeless: a whole /48 gets 30 guesses per 10 minutes, not 30 per address it can spell.
 * Creation is limited per owner.
 */
export const PAIRING = {
  codeLength: 8,
  lifetimeMs: 10 * 60_000,
  createsPerHour: 20,
  redeemsPerAddress: 10,
  redeemsPerNetwork: 30,
  redeemWindowSec: 600,
} as const;

/** The name an agent gets when neither the owner nor the agent named it. */
export const UNNAMED_AGENT = 'New agent';

const INVALID_CODE = 'unknown, used or expired pairing code';
const NEXT_STEP = 'ask the owner for a new code: in the owner app, Agents, "Add agent" with no key shows one; it works once, for 10 minutes';

/** A fresh code in display form, `XXXX-XXXX`. */
export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING.codeLength; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** The code as typed (any case, spaces and dashes anywhere) in canonical form, or undefined. */
export function normalizePairingCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== PAIRING.codeLength) return undefined;
  for (const c of code) if (!PAIRING_ALPHABET.includes(c)) return undefined;
  return code;
}

/** Stored form: only the hash, under its own prefix so it never meets a WebAuthn challenge. */
const stored = (canonical: string): string => sha256Hex(`pairing:${canonical}`);

function checkName(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const name = raw.trim();
  if (!name || name.length > AGENT_NAME_MAX) throw badRequest(`name must be 1 to ${AGENT_NAME_MAX} characters`);
  return name;
}

/**
 * Pairing an agent with its owner without the owner's password on the agent's machine: the owner
 * (signed in) asks for a one-time code; the agent redeems it with its public key and becomes the
 * owner's agent, created exactly as the owner's own POST /api/agents would (limits, activity,
 * "agent added" notification). The code is a single-use challenge (purpose `pairing`, user = owner,
 * subject = the name the owner gave): of racing redeemers exactly one wins.
 */
export class Pairing {
  constructor(
    private readonly challenges: ChallengesRepo,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    private readonly agents: Agents,
    private readonly newCode: () => string = newPairingCode,
  ) {}

  async createCode(userId: string, rawName?: string): Promise<{ code: string; expiresAt: number; name: string | null }> {
    const name = checkName(rawName) ?? null;
    await this.limiter.check(`pairing:create:${userId}`, PAIRING.createsPerHour, 3600);
    const code = this.newCode();
    const canonical = normalizePairingCode(code);
    if (!canonical) throw new Error('the pairing code generator made an invalid code');
    const expiresAt = this.clock.now() + PAIRING.lifetimeMs;
    await this.challenges.create({ challenge: stored(canonical), purpose: 'pairing', userId, sessionHash: null, subject: name, expiresAt });
    return { code, expiresAt, name };
  }

  /**
   * Everything the agent sent is checked before the code is used, so a bad key or name does not
   * burn it. A code that then fails on the owner's agent limits is used up all the same.
   */
  async redeem(input: { code: string; name?: string; jwk?: unknown; pubkey?: string | null }, ip: string): Promise<AgentRecord> {
    await checkClient(this.limiter, 'pairing:redeem', ip, { perAddress: PAIRING.redeemsPerAddress, perNetwork: PAIRING.redeemsPerNetwork, windowSec: PAIRING.redeemWindowSec });
    const canonical = normalizePairingCode(input.code);
    if (!canonical) throw badRequest(INVALID_CODE, { next_step: NEXT_STEP });
    const jwk = agentPublicKey(input);
    const agentName = checkName(input.name);
    const issued = await this.challenges.consume(stored(canonical), 'pairing', this.clock.now());
    if (!issued?.userId) throw badRequest(INVALID_CODE, { next_step: NEXT_STEP });
    return this.agents.create(issued.userId, { name: issued.subject ?? agentName ?? UNNAMED_AGENT, jwk }, ip);
  }
}
