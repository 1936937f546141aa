// The example operator's settings, all from the environment (both server.ts and cli.ts read them).
//   MANDATE_URL        where this operator's servers reach Mandate (default http://localhost:8080)
//   MANDATE_ISSUER     Mandate's public base URL (its BASE_URL), where people's browsers go and what
//                      comes back as `iss`; default MANDATE_URL
//   OPERATOR_ID        op_... from the registration
//   OPERATOR_SECRET    the secret shown once at the registration (or after a rotation)
//   VERIFICATION_LINE  the registration's verification.line, served at /.well-known/service-site.txt
//   PORT, HOST         where server.ts listens (4000, 127.0.0.1)
//   PUBLIC_URL         how browsers reach server.ts (default http://localhost:<PORT>); the redirect
//                      URI to register is <PUBLIC_URL>/callback
//   DATA_DIR           where connections and agents' private keys are kept (default ~/.mandate-operator)
import { homedir } from 'node:os';
import { join } from 'node:path';

export type OperatorConfig = {
  mandateUrl: string;
  issuer: string;
  operatorId: string;
  operatorSecret: string;
  verificationLine: string;
  port: number;
  host: string;
  publicUrl: string;
  redirectUri: string;
  dataDir: string;
};

const withoutSlash = (url: string): string => url.replace(/\/+$/, '');

export function readConfig(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const missing = ['OPERATOR_ID', 'OPERATOR_SECRET'].filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`set ${missing.join(' and ')} (from POST /api/operators)`);
  const port = Number(env.PORT ?? 4000);
  const mandateUrl = withoutSlash(env.MANDATE_URL ?? 'http://localhost:8080');
  const publicUrl = withoutSlash(env.PUBLIC_URL ?? `http://localhost:${port}`);
  return {
    mandateUrl,
    issuer: withoutSlash(env.MANDATE_ISSUER ?? mandateUrl),
    operatorId: env.OPERATOR_ID ?? '',
    operatorSecret: env.OPERATOR_SECRET ?? '',
    verificationLine: env.VERIFICATION_LINE ?? '',
    port,
    host: env.HOST ?? '127.0.0.1',
    publicUrl,
    // Registered exactly so: Mandate compares redirect URIs character for character.
    redirectUri: `${publicUrl}/callback`,
    dataDir: env.DATA_DIR ?? join(homedir(), '.mandate-operator'),
  };
}
