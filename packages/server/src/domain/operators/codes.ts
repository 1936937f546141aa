/** The numbers and hashing shared by the consent (which makes codes) and the code exchange (which spends them). */
import { sha256Hex } from '../../crypto/random.ts';

/** How long the operator has to exchange a code (interface limits: "Operator code exchange 60 seconds"). */
export const CODE_LIFETIME_MS = 60_000;
/** A new connection's agent limit (interface limits: "Agents per operator connection default 5"). */
export const DEFAULT_MAX_AGENTS = 5;

/** Codes are stored only as this SHA-256 (hex). */
export const hashCode = (code: string): string => sha256Hex(code);
