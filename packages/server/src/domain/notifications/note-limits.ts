/**
 * What keeps agents' notes from burying the queue (issue 22). A note is news: an hour late, it is
 * worthless as a push (it stays in the inbox for 30 days). And an owner whose devices do not take
 * pushes must not pile up work for the senders: beyond NOTE_BUDGET undelivered note pushes of one
 * owner (all devices together), the oldest are dropped when a new note comes (never refused: the
 * agent's note still reaches the inbox, and the newest are the ones worth pushing).
 */
export const NOTE_TTL_MS = 3600_000;
export const NOTE_BUDGET = 200;
export const NOTE_DROPPED = `dropped: over the owner's budget of ${NOTE_BUDGET} undelivered note pushes (the note stays in the inbox)`;
