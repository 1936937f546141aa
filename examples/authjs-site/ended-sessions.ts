// The Mandate sign-ins that ended (by `sid`), so that the Auth.js sessions made from them end too.
//
// Why JWT sessions and this list rather than database sessions: a JWT session needs no database and
// no Auth.js adapter, and the `jwt` callback runs on every session read, so one lookup there ends a
// session as soon as Mandate's logout token arrives. A session whose sid was ended is refused (and
// its cookie cleared) at its next read and never renewed; every cookie carrying that sid has
// expired `keepMs` (the session's max age) after the logout, so the entry can then be forgotten.
//
// Kept in memory: right for one process. With several, keep it where all of them read (your
// database, Redis), or a logout received by one process would not end the session in the others.

export function endedSessions(keepMs: number) {
  const ended = new Map<string, number>(); // sid -> when it can be forgotten (ms since the epoch)
  return {
    end(sid: string): void {
      const now = Date.now();
      for (const [old, until] of ended) if (until <= now) ended.delete(old);
      ended.set(sid, now + keepMs);
    },
    has(sid: string): boolean {
      return ended.has(sid);
    },
  };
}
