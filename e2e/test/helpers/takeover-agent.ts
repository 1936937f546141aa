import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { MandateAgent, type TakeoverCommand, type TakeoverStream, streamTakeover } from '@mandate/agent';

/**
 * The agent's end of a take-over as a process of its own, the way an agent driving a browser uses the
 * SDK (`@mandate/agent` as the workspace installs it, `ws` for the relay socket): the agent of `--dir`
 * asks its owner to take over (`requestTakeover`), streams the JPEG of `--jpeg` as its screen
 * (`streamTakeover`), reports the page's URL once the owner is there and the focused field (`--field`)
 * after a click, and hands control back (`done`) once the owner presses Enter: the form it was stuck on is
 * sent. Everything it learns is printed as one JSON line on stdout; it exits 0 when the session
 * ended with `done`, 1 otherwise. The test imports only its types (`import type`: nothing runs).
 *
 *   node --import tsx e2e/test/helpers/takeover-agent.ts --dir DIR --jpeg FILE --width W --height H --url URL --reason TEXT --field NAME
 */

export type TakeoverAgentLine =
  | { event: 'requested'; takeover_id: string; expires_in: number }
  | { event: 'connected' }
  | { event: 'command'; command: TakeoverCommand }
  | { event: 'ended'; reason: string };

const { values } = parseArgs({
  options: {
    dir: { type: 'string' }, jpeg: { type: 'string' }, width: { type: 'string' }, height: { type: 'string' },
    url: { type: 'string' }, reason: { type: 'string' }, field: { type: 'string' },
  },
});
const required = (name: keyof typeof values): string => {
  const v = values[name];
  if (!v) throw new Error(`--${name} is required`);
  return v;
};

const print = (line: TakeoverAgentLine): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

const screen = { jpeg: readFileSync(required('jpeg')), w: Number(required('width')), h: Number(required('height')) };
const pageUrl = required('url');
const field = required('field');
const agent = MandateAgent.fromDirectory(required('dir'));
const asked = await agent.requestTakeover({ url: pageUrl, reason: required('reason') });
print({ event: 'requested', takeover_id: asked.takeoverId, expires_in: asked.expiresIn });

// Commands only come once the owner is connected, after the socket opened and `stream` is set.
let stream: TakeoverStream | undefined;
stream = await streamTakeover({
  serviceUrl: agent.serviceUrl,
  takeoverId: asked.takeoverId,
  agentToken: asked.agentToken,
  WebSocket,
  fps: 5,
  frame: async () => screen,
  onCommand: (command) => {
    print({ event: 'command', command });
    if (command.t === 'live') stream?.url(pageUrl);
    if (command.t === 'click') stream?.focus(field);
    if (command.t === 'key' && command.key === 'Enter') stream?.done();
  },
});
print({ event: 'connected' });
const reason = await stream.ended;
print({ event: 'ended', reason });
process.exitCode = reason === 'done' ? 0 : 1;
