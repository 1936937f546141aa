import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateAgentKeyPair, type EcP256PublicJwk } from '@mandate/protocol';

/** An agent key pair: the private JWK in a 0600 file (for the agent process), the public JWK to paste. */
export interface AgentKey {
  publicJwk: EcP256PublicJwk;
  privateKey: CryptoKey;
  keyFile: string;
  remove(): void;
}

export async function agentKey(): Promise<AgentKey> {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'mandate-agent-'));
  const keyFile = join(dir, 'key.json');
  writeFileSync(keyFile, JSON.stringify(await crypto.subtle.exportKey('jwk', privateKey)), { mode: 0o600 });
  return { publicJwk, privateKey, keyFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export type AgentEvent = { event: string } & Record<string, unknown>;

/** The agent process (helpers/agent-process.ts) and what it said so far. */
export interface AgentRun {
  events: AgentEvent[];
  /** Resolves with the first event (from the start) named `name`, or fails when the process ends first. */
  next(name: string, timeoutMs?: number): Promise<AgentEvent>;
  send(command: 'verify' | 'refresh' | 'exit'): void;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(): void;
  output(): string;
}

const SCRIPT = fileURLToPath(new URL('./agent-process.ts', import.meta.url));

export function runAgent(opts: { serviceUrl: string; agentId: string; keyFile: string; site: string; scopes: string[]; userInfo?: string[] }): AgentRun {
  const proc: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: {
      ...process.env,
      MANDATE_URL: opts.serviceUrl,
      AGENT_ID: opts.agentId,
      AGENT_KEY_FILE: opts.keyFile,
      SITE: opts.site,
      SCOPES: opts.scopes.join(','),
      USER_INFO: (opts.userInfo ?? []).join(','),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: AgentEvent[] = [];
  let out = '';
  let pending = '';
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    pending += d.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        events.push(JSON.parse(line) as AgentEvent);
      } catch {
        // not an event line
      }
    }
    wake();
  });
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => {
    wake();
    resolve(code);
  }));
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));

  return {
    events,
    output: () => out,
    exited,
    send(command) {
      proc.stdin?.write(`${command}\n`);
    },
    stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    },
    async next(name, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = events.findIndex((e) => e.event === name);
        const found = events[i];
        if (found) {
          // Marked as seen, so a later call for the same name waits for the next one.
          events[i] = { ...found, event: `${name}:seen` };
          return found;
        }
        if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`agent process ended (${proc.exitCode}) before "${name}":\n${out}`);
        if (Date.now() > deadline) throw new Error(`agent process said no "${name}" within ${timeoutMs} ms:\n${out}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 250);
        });
      }
    },
  };
}
