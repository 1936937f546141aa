import { type AgentSource, agentCommand, agentPairCommand } from '@mandate/protocol/agent-command';
import type { DocsTree } from '../docs/docs-tree.ts';

/**
 * llms.txt (llmstxt.org): an H1, a one-paragraph summary in a blockquote, notes, then H2 sections of
 * links. Doc links point at the Markdown source (`/docs/{section}/{page}.md`), which is what an AI
 * assistant reads best; the HTML page is the same address without `.md`.
 */
export function llmsTxt(baseUrl: string, docs: DocsTree, agentPackage: string | null = null): string {
  const tool: AgentSource = { baseUrl, agentPackage };
  const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
  const lines = [
    '# Mandate',
    '',
    '> Mandate is an authorization service for software agents. A person (the owner) approves with a passkey what each',
    '> of their agents may do at each site; the agent gets a short-lived pass bound to its own P-256 key by DPoP',
    '> (RFC 9449); sites verify every request, by calling Mandate or locally against its published keys and a signed',
    '> revocation list, and require a one-time step-up approval for sensitive actions.',
    '',
    `This instance: ${baseUrl}. Agent endpoints live under \`/api/v1\` and authenticate with an agent JWT (ES256, \`iss\` = \`sub\` = the agent id, \`type\` \`agent\`, at most 900 s of life). Passes are sent to sites as \`Authorization: Bearer <pass>\` with a fresh \`DPoP\` proof per request; step-up tokens as \`X-Service-Stepup\`. Errors are \`{"detail": ..., "next_step": ...}\`.`,
    '',
    // The same commands the owner app prints (decisions §26): they need only Node.js 20+ and npm.
    `The agent tool (\`mandate-agent\`, with the agent SDK) comes from this instance: \`${agentCommand(tool, ['--help'])}\`. The owner makes a one-time code in the owner app (Agents, "Add agent"); the agent pairs with it: \`${agentPairCommand(tool, 'CODE')}\`.`,
    '',
  ];
  for (const section of docs.sections) {
    lines.push(`## ${section.title}`, '');
    if (section.summary) lines.push(section.summary, '');
    for (const page of section.pages) {
      lines.push(`- [${page.title}](${baseUrl}${page.path}.md)${page.description ? `: ${oneLine(page.description)}` : ''}`);
    }
    lines.push('');
  }
  lines.push(
    '## API',
    '',
    `- [OpenAPI description](${baseUrl}/openapi.json): every endpoint, schema and error of this instance (OpenAPI 3.1, version 0.1.0)`,
    `- [Signing keys](${baseUrl}/api/v1/jwks): the JWKS that passes, step-up tokens and revocation lists are signed with`,
    `- [Agent SDK and tool](${baseUrl}/download/agent): the npm tarball of @mandate/agent (the \`mandate-agent\` CLI), @mandate/protocol inside`,
    `- [Site SDK](${baseUrl}/download/site): the npm tarball of @mandate/site, @mandate/protocol inside`,
    '',
    '## Optional',
    '',
    `- [How it works](${baseUrl}/how-it-works): the whole flow for people, in prose`,
    `- [For sites](${baseUrl}/for-shops): why and how a site accepts agents`,
    `- [Why Mandate](${baseUrl}/pitch): the case for sites and owners`,
    `- [The challenge](${baseUrl}/challenge/agents.txt): a protected route of this instance to try an agent end to end (scope \`challenge\`, step-up action \`claim\`), the steps as plain text`,
    `- [Check a site](${baseUrl}/check): whether a site is ready for agents with this instance (JSON: ${baseUrl}/api/readiness?site=)`,
    `- [Check an agent](${baseUrl}/tools/check-agent): whether a pasted request carries a valid Web Bot Auth signature, or which keys an agent publishes (JSON: POST ${baseUrl}/api/v1/check-agent)`,
    '',
  );
  return lines.join('\n');
}
