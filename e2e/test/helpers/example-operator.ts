import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, runNode } from '../../../packages/server/test/helpers/child-process.ts';

/**
 * The example operator (`examples/operator`) as docs/operators/quickstart.md runs it: `server.ts`
 * as its own process, and `cli.ts` one process per command, both configured by the environment and
 * sharing a DATA_DIR of their own (removed by `stop()`).
 */

export type OperatorSettings = {
  /** Where the operator listens: http://127.0.0.1:<port>, its PUBLIC_URL. */
  port: number;
  /** MANDATE_URL: where its servers reach Mandate. */
  mandateUrl: string;
  /** MANDATE_ISSUER: Mandate's BASE_URL, where browsers go and what `iss` says. */
  issuer: string;
  operatorId: string;
  secret: string;
  verificationLine: string;
};

export type CliAnswer = { code: number | null; json: unknown; output: string };

export class ExampleOperator {
  private constructor(
    readonly url: string,
    readonly dataDir: string,
    readonly process: Child,
    private readonly env: Record<string, string>,
  ) {}

  /** The redirect URI to register for an operator served on `port`. */
  static redirectUri(port: number): string {
    return `http://127.0.0.1:${port}/callback`;
  }

  static async start(s: OperatorSettings): Promise<ExampleOperator> {
    const dataDir = mkdtempSync(join(tmpdir(), 'mandate-e2e-operator-'));
    const url = `http://127.0.0.1:${s.port}`;
    const env = {
      MANDATE_URL: s.mandateUrl,
      MANDATE_ISSUER: s.issuer,
      OPERATOR_ID: s.operatorId,
      OPERATOR_SECRET: s.secret,
      VERIFICATION_LINE: s.verificationLine,
      PORT: String(s.port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      DATA_DIR: dataDir,
    };
    const child = runNode('example operator', ['--import', 'tsx', 'examples/operator/server.ts'], { env });
    try {
      await child.waitFor('example operator listening on', 30_000);
    } catch (e) {
      rmSync(dataDir, { recursive: true, force: true });
      throw e;
    }
    return new ExampleOperator(url, dataDir, child, env);
  }

  /** `node --import tsx examples/operator/cli.ts <args>`: its exit code and the JSON it printed. */
  async cli(...args: string[]): Promise<CliAnswer> {
    const child = runNode(`operator cli ${args[0] ?? ''}`, ['--import', 'tsx', 'examples/operator/cli.ts', ...args], { env: this.env });
    const code = await child.exited;
    let json: unknown;
    try {
      json = JSON.parse(child.stdout());
    } catch {
      json = undefined;
    }
    return { code, json, output: child.output() };
  }

  async stop(): Promise<void> {
    await this.process.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
