// Makes the agent's key pair: keeps the private key in a file, prints the public key for the owner.
//   node --import tsx examples/quickstart/keygen.ts agent-key.json
import { writeFileSync } from 'node:fs';
import { generateAgentKeyPair } from '@mandate/protocol';

const keyFile = process.argv[2] ?? process.env.AGENT_KEY_FILE ?? 'agent-key.json';
const { privateKey, publicJwk } = await generateAgentKeyPair();
// The private JWK (with `d`) never leaves this machine: not to Mandate, not to any site.
writeFileSync(keyFile, JSON.stringify(await crypto.subtle.exportKey('jwk', privateKey)), { mode: 0o600, flag: 'wx' });

console.log(`private key saved to ${keyFile}; give the owner this public key:`);
console.log(JSON.stringify(publicJwk));
