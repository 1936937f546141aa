import { sql, type RawBuilder } from 'kysely';
import type { ActivityQuery } from '../ports/index.ts';

/**
 * How a page of the activity trail is read, for each combination of its filters (migration 013).
 *
 * Each combination has an index that holds exactly its columns (after user_id) and then the order
 * key, so a page is one range of that index walked newest first, whatever the trail's size and
 * however rarely the filter matches. The order key is owner_seq plus the number of filters: the same
 * order, but a different expression per number of filters. An index made for fewer filters (a part
 * of the combination) therefore cannot give the page's order, and the database cannot choose to walk
 * it and skip the records that fail the other filters, which statistics that take columns as
 * independent can make look cheap (an agent's records "nearly all for shop.example" when that agent
 * never visits it) and which reads as many records as the part matches.
 */
export interface ActivityRead {
  /** The index that answers the page (named for SQLite's INDEXED BY). */
  index: string;
  /** The order key: `owner_seq`, or `owner_seq + n` for n filters. */
  orderKey: RawBuilder<number>;
  /** How many filters were given (the n in the order key). */
  filters: number;
}

const INDEX_BY_FILTERS: Readonly<Record<string, string>> = {
  '': 'activity_user_owner_seq',
  agent: 'activity_user_agent_seq',
  site: 'activity_user_site_seq',
  action: 'activity_user_action_seq',
  'agent+site': 'activity_user_agent_site_seq',
  'agent+action': 'activity_user_agent_action_seq',
  'site+action': 'activity_user_site_action_seq',
  'agent+site+action': 'activity_user_agent_site_action_seq',
};

/** The read for these filters (an empty filter is no filter, as in the route). */
export function activityRead(q: Pick<ActivityQuery, 'agentId' | 'site' | 'action'>): ActivityRead {
  const given = [q.agentId ? 'agent' : '', q.site ? 'site' : '', q.action ? 'action' : ''].filter(Boolean);
  const index = INDEX_BY_FILTERS[given.join('+')];
  if (index === undefined) throw new Error(`no activity index for filters ${given.join('+')}`);
  // A literal, not a parameter: the expression must be the one the index was built on.
  const orderKey = given.length === 0 ? sql<number>`owner_seq` : sql<number>`owner_seq + ${sql.lit(given.length)}`;
  return { index, orderKey, filters: given.length };
}
