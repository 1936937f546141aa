// `npm run pack:sdks`: builds @mandate/protocol, @mandate/site and @mandate/agent (their prepack step)
// and writes installable tarballs to artifacts/sdks/ (or the folder given as the first argument),
// then prints the command that installs them in another project.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const destination = resolve(process.argv[2] ?? `${ROOT}artifacts/sdks`);
mkdirSync(destination, { recursive: true });
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const out = execFileSync(npm, ['pack', '--json', '--pack-destination', destination, '-w', '@mandate/protocol', '-w', '@mandate/site', '-w', '@mandate/agent'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const files = JSON.parse(out).map((pack) => resolve(destination, pack.filename));
process.stdout.write(`Packed:\n${files.map((f) => `  ${f}`).join('\n')}\n\nInstall in your project (the site SDK needs protocol; the agent SDK and CLI too):\n  npm install ${files.join(' ')}\n`);
