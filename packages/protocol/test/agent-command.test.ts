import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { agentCommand, agentInstallCommand, agentPackageSpec, agentPairCommand, agentProgram, agentProgramFrom, isAgentPackageName, shellWord } from '../src/agent-command.ts';

// The one rendering of the commands that install or run the agent tool (decisions §26): from the
// service's own download unless AGENT_PACKAGE names a published package, and never the bare
// `npx mandate-agent` that would run whatever the public registry holds under that name.

describe('agent commands', () => {
  const local = { baseUrl: 'http://localhost:8080' };
  const published = { baseUrl: 'https://mandate.example/', agentPackage: '@mandate/agent' };

  it('run the tool from the service, or from the package the operator named', () => {
    assert.equal(agentPackageSpec(local), 'http://localhost:8080/download/agent');
    assert.equal(agentPackageSpec({ baseUrl: 'https://m.example/sub/', agentPackage: null }), 'https://m.example/sub/download/agent');
    assert.equal(agentProgram(local), 'npx --yes --package=http://localhost:8080/download/agent mandate-agent');
    assert.equal(agentPairCommand(local, 'K7QM-3XWP'), 'npx --yes --package=http://localhost:8080/download/agent mandate-agent pair K7QM-3XWP --service http://localhost:8080');
    assert.equal(agentInstallCommand(local), 'npm install http://localhost:8080/download/agent');
    assert.equal(agentPairCommand(published, 'K7QM-3XWP'), 'npx --yes --package=@mandate/agent mandate-agent pair K7QM-3XWP --service https://mandate.example');
    assert.equal(agentInstallCommand(published), 'npm install @mandate/agent');
    assert.equal(agentProgramFrom('@acme/agent@1.2.3'), 'npx --yes --package=@acme/agent@1.2.3 mandate-agent');
  });

  it('quote what a shell would read otherwise', () => {
    assert.equal(agentCommand(local, ['init', '--service', local.baseUrl, '--name', "Bob's bot"]), `npx --yes --package=http://localhost:8080/download/agent mandate-agent init --service http://localhost:8080 --name 'Bob'\\''s bot'`);
    assert.equal(agentCommand(local, ['set-id', 'ag_abc']), 'npx --yes --package=http://localhost:8080/download/agent mandate-agent set-id ag_abc');
  });

  it('every word reaches the program as it was, whatever it holds', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }).filter((w) => !w.includes('\0')), (word) => {
      const echoed = execFileSync('/bin/sh', ['-c', `printf %s ${shellWord(word)}`], { encoding: 'utf8' });
      assert.equal(echoed, word);
    }), { numRuns: 60 });
  });

  it('AGENT_PACKAGE is an npm package name with an optional version or tag, nothing a shell would act on', () => {
    for (const good of ['@mandate/agent', 'mandate-agent-tool', '@acme/agent@1.2.3', '@acme/agent@next', 'agent@0.1.0-rc.1']) assert.ok(isAgentPackageName(good), good);
    for (const bad of ['', '@Mandate/agent', 'Agent', '.agent', '_agent', '@mandate/', '@/agent', 'https://evil.example/a.tgz', 'a b', 'a;b', '$(id)', '`id`', '../agent', 'a@', 'a@1 || 2', 'a@^1', `a${'b'.repeat(214)}`]) {
      assert.ok(!isAgentPackageName(bad), bad);
    }
  });
});
