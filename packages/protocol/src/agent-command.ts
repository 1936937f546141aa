// The commands that install or run the agent tool (`mandate-agent`), as the service, the owner app,
// the docs and the CLI print them (decisions §26). One rendering, so what a person copies is the same
// everywhere, and it works on a fresh machine with Node and npm alone: the package comes from the
// Mandate service itself (`<BASE_URL>/download/agent`), or from a registry once the operator names a
// published package (AGENT_PACKAGE). Never the bare `npx mandate-agent`: that name on the public
// registry belongs to nobody, so whoever published it would run on every owner's machine.
//
// Self-contained (no imports): the owner app's browser bundle takes it as
// `@mandate/protocol/agent-command` without the rest of the package (jose, node:crypto).

/** Where the tool comes from: this service's address and, once published, the registry package. */
export interface AgentSource {
  /** The service's BASE_URL, without a trailing slash. */
  baseUrl: string;
  /** A registry package (`@mandate/agent`, optionally `@version`) replacing the download, or null. */
  agentPackage?: string | null;
}

/** The tool's command name, the `bin` of @mandate/agent. */
export const AGENT_BIN = 'mandate-agent';

// npm's rules for a package name (lower case, URL-safe, an optional @scope/, at most 214 characters),
// and for the optional `@version` or `@tag` after it. Nothing they allow needs shell quoting.
const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
const VERSION_OR_TAG = /^[A-Za-z0-9][A-Za-z0-9.+-]*$/;

/** Whether `spec` may be AGENT_PACKAGE: an npm package name, optionally `@1.2.3` or `@tag`. */
export function isAgentPackageName(spec: string): boolean {
  const at = spec.indexOf('@', 1);
  const name = at < 0 ? spec : spec.slice(0, at);
  return spec.length <= 214 && PACKAGE_NAME.test(name) && (at < 0 || VERSION_OR_TAG.test(spec.slice(at + 1)));
}

/** What npm installs: the registry package when one is named, else `<BASE_URL>/download/agent`. */
export function agentPackageSpec(source: AgentSource): string {
  return source.agentPackage || `${source.baseUrl.replace(/\/+$/, '')}/download/agent`;
}

/** `npx --yes --package=<spec> mandate-agent`: runs the tool without installing it first. */
export function agentProgram(source: AgentSource): string {
  return agentProgramFrom(agentPackageSpec(source));
}

/**
 * The same for a package spec already known (the CLI, run by npx, has it from npm). `--yes`: npx asks
 * before it installs a package it has not got, and the person copying the line has chosen this one.
 */
export function agentProgramFrom(spec: string): string {
  return `npx --yes --package=${shellWord(spec)} ${AGENT_BIN}`;
}

/** The tool run with `args` (each quoted for a POSIX shell where it needs it). */
export function agentCommand(source: AgentSource, args: readonly string[]): string {
  return [agentProgram(source), ...args.map(shellWord)].join(' ');
}

/** `npm install <spec>`: the tool and the SDK in a project. */
export function agentInstallCommand(source: AgentSource): string {
  return `npm install ${shellWord(agentPackageSpec(source))}`;
}

/** The command that pairs an agent with the owner's one-time `code` (`mandate-agent pair`). */
export function agentPairCommand(source: AgentSource, code: string): string {
  return agentCommand(source, ['pair', code, '--service', source.baseUrl.replace(/\/+$/, '')]);
}

/** `word` as one word of a POSIX shell command: as is when safe, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
