import { hash, verify } from '@node-rs/argon2';

// argon2id (the library default algorithm), OWASP's second recommended profile.
const OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

let dummy: Promise<string> | undefined;

/**
 * Verifies a password. With no stored hash (unknown account) it verifies against a dummy hash so
 * that both failures take about the same time and cannot tell whether an email is registered.
 */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  dummy ??= hash('not-a-real-password', OPTIONS);
  const target = stored ?? (await dummy);
  try {
    const ok = await verify(target, password);
    return stored !== undefined && ok;
  } catch {
    return false;
  }
}
