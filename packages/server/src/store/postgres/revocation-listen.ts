import pg from 'pg';
import { REV_SEQ_CHANNEL, type RevocationSignalHub } from '../revocation-signal.ts';

/** Wait before connecting the listener again after its connection was lost. */
const RECONNECT_MS = 1000;

/**
 * One connection of this node, outside the pool, that LISTENs on the rev_seq channel and tells `hub`
 * of every rev_seq any node commits (decisions §30). When the connection is lost it connects again,
 * then tells `hub` of a possible gap (undefined): notifications sent meanwhile are lost for good.
 */
export function listenForRevocations(url: string, hub: RevocationSignalHub): { close(): Promise<void> } {
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (reconnected: boolean): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client = c;
    let lost = false;
    const retry = () => {
      if (lost) return;
      lost = true;
      c.end().catch(() => {});
      if (!closed) timer = setTimeout(() => void connect(true), RECONNECT_MS);
    };
    c.on('error', retry);
    c.on('end', retry);
    c.on('notification', (n) => {
      if (n.channel !== REV_SEQ_CHANNEL) return;
      const v = Number(n.payload);
      hub.emit(Number.isSafeInteger(v) ? v : undefined);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${REV_SEQ_CHANNEL}`);
      if (reconnected) hub.emit(undefined);
    } catch {
      retry();
    }
  };
  void connect(false);

  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => {});
    },
  };
}
