import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { agentCommand, agentInstallCommand, agentPairCommand, type AgentSource } from '@mandate/protocol/agent-command';
import { type FreshMachine, freshMachine, showShellRun } from '../../packages/server/test/helpers/fresh-machine.ts';
import { HttpOwner } from '../../packages/server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../packages/server/test/helpers/server-process.ts';

// A new owner's first agent, on a machine with only Node and npm (decisions §26, issue 27): the
// owner makes a pairing code as the owner app does; the command the app shows for it (the service's
// `command`, shown verbatim on the card) is run with `sh -c` in an empty folder outside the
// repository, with a clean environment and a fresh npm cache. npx fetches the agent tool from the
// service (`/download/agent`, @mandate/protocol inside: any @mandate/* asked of a registry fails
// here), pairs, and the owner sees the agent. The commands the tool then prints run the same way,
// and so does `npm install <BASE_URL>/download/agent` in a new project.

describe('the agent tool from the service itself, on a fresh machine', { timeout: 300_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let machine: FreshMachine;
  let source: AgentSource;
  let agentId = '';

  before(async () => {
    server = await startServer({ name: 'agent-from-service', env: { DATABASE_URL: '' } });
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'first-agent' });
    machine = freshMachine();
    source = { baseUrl: server.baseUrl, agentPackage: null };
  });
  after(async () => {
    await server?.stop();
    machine?.remove();
  });

  it('the pair command the app shows, run as it stands, downloads the tool from the service and pairs the agent', async () => {
    const made = await owner.ok<{ code: string; command: string }>('POST', '/api/agents/pairing-codes', { name: 'First agent' });
    // What the card shows: the service's command, the one rendering the app uses too.
    assert.equal(made.command, agentPairCommand(source, made.code));
    assert.equal(made.command, `npx --yes --package=${server.baseUrl}/download/agent mandate-agent pair ${made.code} --service ${server.baseUrl}`);

    const paired = await machine.sh(made.command);
    assert.equal(paired.code, 0, `${showShellRun(paired)}\n${server.logs()}`);
    agentId = /Paired: agent (ag_[a-z0-9]+) \("First agent"\)/.exec(paired.stdout)?.[1] ?? '';
    assert.match(agentId, /^ag_/, showShellRun(paired));
    // What it prints next is in the form that ran it: copied, it works here too.
    const next = /^Next: (.*)$/m.exec(paired.stdout)?.[1] ?? '';
    assert.ok(next.startsWith(`npx --yes --package=${server.baseUrl}/download/agent mandate-agent request `), next);

    const agents = await owner.ok<{ id: string; name: string }[]>('GET', '/api/agents');
    assert.deepEqual(agents.filter((a) => a.id === agentId).map((a) => a.name), ['First agent'], 'the owner sees the paired agent');
  });

  it('whoami, run the same way, is the paired agent', async () => {
    assert.match(agentId, /^ag_/, 'the agent the test before paired');
    const whoami = await machine.sh(agentCommand(source, ['whoami', '--json']));
    assert.equal(whoami.code, 0, showShellRun(whoami));
    const me = JSON.parse(whoami.stdout) as { agent_id?: string; service_url?: string };
    assert.equal(me.agent_id, agentId);
  });

  it('npm install <BASE_URL>/download/agent installs the tool and the SDK in a new project, without the registry for @mandate/*', async () => {
    const installed = await machine.sh(`mkdir project && cd project && npm init -y >/dev/null && ${agentInstallCommand(source)} --no-audit --no-fund && ls node_modules/@mandate/agent/node_modules/@mandate && npx --no mandate-agent whoami --json`);
    assert.equal(installed.code, 0, showShellRun(installed));
    assert.match(installed.stdout, /^protocol$/m, 'protocol came inside the tarball');
    assert.match(installed.stdout, new RegExp(`"agent_id": ?"${agentId}"`));
  });
});
