import assert from 'node:assert/strict';
import {
  call, expectStatus, HttpOwner, remoteActivity, remoteAgent, remoteCollect, remoteDecide, remoteGrant, remoteStepupRequest, remoteToken,
  type RemoteAgent, type RemoteOwner, type Reply, type Target,
} from './over-http.ts';

/**
 * A steady mix of writes against a server process (approvals, pass refreshes, step-ups used at a
 * site) that remembers which of them were acknowledged (a 2xx reached the client) and which are
 * unknown (sent, but the answer was lost or was a 503). The fault tests (a node killed with
 * SIGKILL, PostgreSQL restarted) disturb the service while it runs, then `verify` checks on the
 * service as it is afterwards that no acknowledged write is lost, that no single-use token works
 * twice, and that every owner's audit trail is numbered without gaps.
 */

const MAX_USES = 100_000;
const STEPUP_SITE = 'pay.example';
const STEPUP_URL = `https://${STEPUP_SITE}/checkout`;
/**
 * The token endpoint allows 60 calls a minute per agent and site, step-up requests 10 a minute per
 * agent. A chain makes at most 25 answered calls, so that `verify` can try every spent token again
 * within the same limit.
 */
const TOKEN_CALLS_PER_CHAIN = 25;
const STEPUPS = 9;
/**
 * An agent may file 60 access requests an hour across all sites (decisions §25), so the approvals
 * come from a row of requesters, 50 requests each, at the same 50 sites (one grant per agent and
 * site; 50 sites stay far from the 500-site quota). 20 requesters and the 3 refreshers stay under the
 * 30 agents an owner may add per hour.
 */
const REQUESTS_PER_REQUESTER = 50;
const REQUESTERS = 20;

type Outcome = 'acked' | 'unknown' | 'refused';

interface Chain {
  agent: RemoteAgent;
  site: string;
  current: string;
  /** The current token was sent and its answer lost: it may or may not have been used. */
  currentUncertain: boolean;
  /** Every refresh token that left the client except `current`: each must be refused from now on. */
  spent: string[];
  /** 200 answers from the token endpoint (passes issued for sure). */
  acked: number;
  /** Token calls whose answer was lost (a pass may or may not have been issued). */
  unknown: number;
  /** Token calls that were answered other than 503 (they count against the rate limit). */
  calls: number;
}

interface StepupUse {
  token: string;
  verifyBody: Record<string, unknown>;
}

export class Workload {
  readonly statuses = new Map<number, number>();
  /** Requests that never got an HTTP answer (connection refused or reset, timeout). */
  networkErrors = 0;
  /** Answers no correct service gives (for example a fresh refresh token refused). */
  readonly surprises: string[] = [];
  readonly acked = { requests: [] as { txn: string; site: string }[], approvals: [] as { txn: string; site: string; agentId: string }[], stepupsUsed: [] as StepupUse[] };
  readonly unknownStepupUses: StepupUse[] = [];
  private stopped = false;
  private running: Promise<void>[] = [];

  private constructor(
    private readonly node: Target,
    readonly approver: RemoteOwner,
    private readonly requesters: RemoteAgent[],
    private readonly chains: Chain[],
    readonly stepupOwner: RemoteOwner,
    private readonly stepupAgent: RemoteAgent,
    private readonly stepupPass: string,
  ) {}

  /** Owners, agents and grants for the workload, made on `node` before any fault. */
  static async prepare(node: Target, baseUrl: string): Promise<Workload> {
    const approver = await HttpOwner.signUp(node, baseUrl, { label: 'approver' });
    const requesters: RemoteAgent[] = [];
    for (let i = 0; i < REQUESTERS; i++) requesters.push(await remoteAgent(node, approver, `Requester ${i}`));
    const chains: Chain[] = [];
    for (let i = 0; i < 3; i++) {
      const agent = await remoteAgent(node, approver, `Refresher ${i}`);
      const site = `r${i}.example`;
      await remoteGrant(node, approver, agent, site, { max_uses: MAX_USES });
      const first = expectStatus(await remoteToken(node, agent, site), 200, 'first token').body.refresh_token;
      chains.push({ agent, site, current: first, currentUncertain: false, spent: [], acked: 1, unknown: 0, calls: 1 });
    }
    const stepupOwner = await HttpOwner.signUp(node, baseUrl, { label: 'stepper' });
    const stepupAgent = await remoteAgent(node, stepupOwner, 'Stepper');
    await remoteGrant(node, stepupOwner, stepupAgent, STEPUP_SITE);
    const pass = expectStatus(await remoteToken(node, stepupAgent, STEPUP_SITE), 200, 'step-up pass').body.access_token;
    return new Workload(node, approver, requesters, chains, stepupOwner, stepupAgent, pass);
  }

  /** Acknowledged writes so far, by kind. */
  progress(): { approvals: number; refreshes: number; stepups: number } {
    return { approvals: this.acked.approvals.length, refreshes: this.chains.reduce((n, c) => n + c.acked, 0), stepups: this.acked.stepupsUsed.length };
  }

  start(): void {
    this.running = [this.approvals(), ...this.chains.map((c) => this.refreshes(c)), this.stepups()];
  }

  /** Asks every worker to stop and waits for the requests in flight to end (answered or failed). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  /** One request: counts its status; a 2xx is acked, a 4xx refused, anything else (a 503, no answer) unknown. */
  private async send<T>(request: (node: Target) => Promise<Reply<T>>): Promise<{ outcome: Outcome; reply?: Reply<T> }> {
    try {
      const reply = await request(this.node);
      this.statuses.set(reply.status, (this.statuses.get(reply.status) ?? 0) + 1);
      if (reply.status >= 200 && reply.status < 300) return { outcome: 'acked', reply };
      if (reply.status >= 400 && reply.status < 500) return { outcome: 'refused', reply };
      return { outcome: 'unknown', reply };
    } catch {
      this.networkErrors++;
      return { outcome: 'unknown' };
    }
  }

  private pause = (ms = 50) => new Promise((r) => setTimeout(r, ms));

  /** New access requests, each approved with the owner's passkey (one at a time: the sign counter). */
  private async approvals(): Promise<void> {
    for (let i = 0; !this.stopped; i++) {
      const requester = this.requesters[Math.floor(i / REQUESTS_PER_REQUESTER)];
      if (!requester) return; // 1,000 requests: more than any run makes.
      const site = `a${i % REQUESTS_PER_REQUESTER}.example`;
      const agentJwt = await requester.jwt();
      const created = await this.send((n) => call<{ txn_id: string }>(n, 'POST', '/api/v1/authz-requests', { agent_id: requester.id, site, scopes: ['orders:read'], agent_jwt: agentJwt }));
      if (created.outcome !== 'acked' || !created.reply) {
        await this.pause();
        continue;
      }
      const txn = created.reply.body.txn_id;
      this.acked.requests.push({ txn, site });
      if (this.stopped) return;
      const decided = await this.send((n) => remoteDecide(n, this.approver, txn));
      if (decided.outcome === 'acked') this.acked.approvals.push({ txn, site, agentId: requester.id });
    }
  }

  /** A chain of pass refreshes, each with the refresh token of the previous answer. */
  private async refreshes(c: Chain): Promise<void> {
    while (!this.stopped && c.calls < TOKEN_CALLS_PER_CHAIN) {
      const sent = c.current;
      const r = await this.send((n) => remoteToken(n, c.agent, c.site, sent));
      if (r.outcome !== 'unknown') c.calls++;
      if (r.outcome === 'acked' && r.reply) {
        c.spent.push(sent);
        c.current = r.reply.body.refresh_token;
        c.currentUncertain = false;
        c.acked++;
      } else if (r.outcome === 'unknown') {
        // Retried as it is: if the lost call did use it, the retry gets 401 and the chain restarts.
        c.currentUncertain = true;
        c.unknown++;
        await this.pause(100);
      } else if (r.reply?.status === 401 && c.currentUncertain) {
        await this.restartChain(c);
      } else if (r.reply?.status !== 429) {
        this.surprises.push(`refresh of ${c.site} refused: ${r.reply?.status} ${JSON.stringify(r.reply?.body)}`);
        return;
      }
      await this.pause();
    }
  }

  /** A call whose answer was lost used the refresh token: start again without one (allowed within an hour of the approval). */
  private async restartChain(c: Chain): Promise<void> {
    c.spent.push(c.current);
    c.currentUncertain = false;
    for (;;) {
      const r = await this.send((n) => remoteToken(n, c.agent, c.site));
      if (r.outcome !== 'unknown') c.calls++;
      if (r.outcome === 'acked' && r.reply) {
        c.current = r.reply.body.refresh_token;
        c.acked++;
        return;
      }
      // Without a refresh token every success replaces the refresh token, so a lost answer here
      // only spends a use; the chain simply asks again.
      if (r.outcome === 'unknown') c.unknown++;
      else if (r.reply?.status !== 429) return void this.surprises.push(`fresh token for ${c.site} refused: ${r.reply?.status} ${JSON.stringify(r.reply?.body)}`);
      if (this.stopped) return;
      await this.pause(100);
    }
  }

  /** Step-up requests, approved, collected and used at the site (cloud verify with the pass). */
  private async stepups(): Promise<void> {
    const a = this.stepupAgent;
    for (let i = 0; i < STEPUPS && !this.stopped; i++) {
      const asked = await this.send((n) => remoteStepupRequest(n, a, STEPUP_SITE, `pay invoice ${i}`));
      if (asked.outcome !== 'acked' || !asked.reply) continue;
      const txn = asked.reply.body.txn_id;
      if ((await this.send((n) => remoteDecide(n, this.stepupOwner, txn))).outcome !== 'acked') continue;
      const collected = await this.send((n) => remoteCollect(n, a, txn));
      const token = collected.reply?.body.stepup_token;
      if (token === undefined) continue;
      const verifyBody = { access_token: this.stepupPass, dpop: await a.proof(this.stepupPass, STEPUP_URL, 'POST'), method: 'POST', url: STEPUP_URL, stepup_token: token, action: `pay invoice ${i}` };
      const used = await this.send((n) => call<{ valid: boolean }>(n, 'POST', '/api/v1/verify', verifyBody));
      if (used.outcome === 'acked' && used.reply?.body.valid === true) this.acked.stepupsUsed.push({ token, verifyBody });
      else if (used.outcome === 'unknown') this.unknownStepupUses.push({ token, verifyBody });
      else this.surprises.push(`step-up use refused: ${JSON.stringify(used.reply?.body)}`);
    }
  }

  /** Checks the service at `node` (after the fault) against everything acknowledged. */
  async verify(node: Target): Promise<void> {
    assert.deepEqual(this.surprises, []);
    await this.verifyApprovals(node);
    await this.verifyRefreshes(node);
    await this.verifyStepups(node);
    await this.verifyAuditTrail(node, this.approver, this.acked.approvals.length + this.acked.requests.length + this.chains.reduce((n, c) => n + c.acked, 0));
    await this.verifyAuditTrail(node, this.stepupOwner, this.acked.stepupsUsed.length * 4);
  }

  private async verifyApprovals(node: Target): Promise<void> {
    for (const r of this.acked.requests) {
      const polled = await call<{ status: string }>(node, 'GET', `/api/v1/authz-requests/${r.txn}`);
      assert.equal(polled.status, 200, `acknowledged request ${r.txn} (${r.site}) lost: ${JSON.stringify(polled.body)}`);
    }
    const grants = expectStatus(await call<{ agent_id: string; site: string }[]>(node, 'GET', '/api/grants', undefined, this.approver.auth), 200, 'grants').body;
    for (const a of this.acked.approvals) {
      const polled = await call<{ status: string }>(node, 'GET', `/api/v1/authz-requests/${a.txn}`);
      assert.equal(polled.body.status, 'approved', `acknowledged approval of ${a.site} lost: ${JSON.stringify(polled.body)}`);
      assert.ok(grants.some((g) => g.agent_id === a.agentId && g.site === a.site), `no grant for the acknowledged approval of ${a.site}`);
    }
  }

  private async verifyRefreshes(node: Target): Promise<void> {
    const grants = expectStatus(await call<{ agent_id: string; site: string; uses_left: number }[]>(node, 'GET', '/api/grants', undefined, this.approver.auth), 200, 'grants').body;
    for (const c of this.chains) {
      const grant = grants.find((g) => g.agent_id === c.agent.id && g.site === c.site);
      assert.ok(grant, `grant of ${c.site} lost`);
      // Every acknowledged pass was counted; at most the unacknowledged calls add to that.
      const issued = MAX_USES - grant.uses_left;
      assert.ok(issued >= c.acked && issued <= c.acked + c.unknown, `${c.site}: ${issued} passes issued, ${c.acked} acknowledged, ${c.unknown} unknown`);
      for (const token of c.spent) {
        const again = await remoteToken(node, c.agent, c.site, token);
        assert.equal(again.status, 401, `${c.site}: a used refresh token worked again: ${JSON.stringify(again.body)}`);
      }
      // The current token works exactly once (or, when its last use is unknown, at most once).
      const twice = await Promise.all([remoteToken(node, c.agent, c.site, c.current), remoteToken(node, c.agent, c.site, c.current)]);
      const ok = twice.filter((r) => r.status === 200).length;
      if (c.currentUncertain) assert.ok(ok <= 1, `${c.site}: the current refresh token worked twice`);
      else assert.equal(ok, 1, `${c.site}: the current refresh token: ${twice.map((r) => `${r.status} ${JSON.stringify(r.body)}`).join(' / ')}`);
    }
  }

  private async verifyStepups(node: Target): Promise<void> {
    for (const u of this.acked.stepupsUsed) {
      const again = await call<{ valid: boolean; error?: string; error_description?: string }>(node, 'POST', '/api/v1/stepup/verify', { stepup_token: u.token, site: STEPUP_SITE, action: String(u.verifyBody.action) });
      assert.equal(again.body.valid, false, 'a used step-up token worked again');
      // This description is the single-use refusal; an expired token has another one.
      assert.equal(again.body.error_description, 'the step-up token was already used', JSON.stringify(again.body));
      const replay = await call<{ valid: boolean; error?: string }>(node, 'POST', '/api/v1/verify', u.verifyBody);
      assert.equal(replay.body.valid, false, 'a used DPoP proof and step-up token worked again');
    }
    for (const u of this.unknownStepupUses) {
      const tries = await Promise.all([0, 1].map(() => call<{ valid: boolean }>(node, 'POST', '/api/v1/stepup/verify', { stepup_token: u.token, site: STEPUP_SITE, action: String(u.verifyBody.action) })));
      assert.ok(tries.filter((t) => t.body.valid === true).length <= 1, 'a step-up token worked twice');
    }
  }

  /** The owner's records are numbered 1..N, no number missing or repeated, and at least `atLeast` of them. */
  private async verifyAuditTrail(node: Target, owner: RemoteOwner, atLeast: number): Promise<void> {
    const records = await remoteActivity(node, owner);
    const seqs = records.map((r) => r.seq).sort((x, y) => x - y);
    assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1), 'the audit sequence has a gap or a repeat');
    assert.ok(seqs.length >= atLeast, `${seqs.length} audit records, fewer than the ${atLeast} acknowledged writes`);
    if (owner === this.approver) {
      for (const a of this.acked.approvals) {
        assert.ok(records.some((r) => r.action === 'request.approved' && r.detail.txn_id === a.txn), `no audit record of the approval of ${a.site}`);
      }
    } else {
      assert.ok(records.filter((r) => r.action === 'stepup.used').length >= this.acked.stepupsUsed.length, 'a used step-up has no audit record');
    }
  }
}
