// Makes the agent's key pair: keeps the private key in a file, prints the public key for the owner.
//   node --import tsx examples/quickstart/keygen.ts [key-file]
// The key file is ~/.mandate/agent-key.json unless given (or set in AGENT_KEY_FILE): outside the
// checkout, so that it cannot end up in a commit.
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { generateAgentKeyPair } from '@mandate/protocol';

const keyFile = process.argv[2] ?? process.env.AGENT_KEY_FILE ?? join(homedir(), '.mandate', 'agent-key.json');
const { privateKey, publicJwk } = await generateAgentKeyPair();
// The private JWK (with `d`) never leaves this machine: not to Mandate, not to any site. Only you may
// read it (directory 700, file 600), and an existing key is never overwritten.
mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
writeFileSync(keyFile, JSON.stringify(await crypto.subtle.exportKey('jwk', privateKey)), { mode: 0o600, flag: 'wx' });

console.log(`private key saved to ${keyFile}; give the owner this public key:`);
console.log(JSON.stringify(publicJwk));
