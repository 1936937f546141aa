/**
 * What each docs section is for, and the order sections and pages are listed in. A section or page
 * not named here still appears (after the named ones, alphabetically), with its folder name as title.
 */
export interface SectionInfo {
  title: string;
  summary: string;
  /** Preferred page order; other pages follow alphabetically. */
  pageOrder: readonly string[];
}

export const SECTIONS: Readonly<Record<string, SectionInfo>> = {
  agents: {
    title: 'For agent developers',
    summary: 'Give an AI agent its own key, ask its owner for access to a site, and call the site with a short-lived pass and a DPoP proof.',
    pageOrder: ['quickstart', 'sdk', 'cli', 'mcp', 'unattended', 'web-bot-auth'],
  },
  sites: {
    title: 'For sites',
    summary: 'Let agents in on behalf of people: verify each request in cloud or local mode, follow the site rules, report misbehaving agents.',
    pageOrder: ['quickstart', 'sdk', 'mcp', 'readiness', 'challenge'],
  },
  operators: {
    title: 'For operators',
    summary: 'Run agents for many people: register your company, prove its domain, and connect people with their consent (a passkey, PKCE and a one-time code).',
    pageOrder: ['registering', 'consent'],
  },
  reference: {
    title: 'Reference',
    summary: 'The conventions every endpoint follows: sessions, errors, limits, passes, verification, revocation, and how passkeys are checked.',
    pageOrder: ['api', 'passkeys'],
  },
  operations: {
    title: 'Operations',
    summary: 'Run Mandate yourself: one machine on the embedded database, or many nodes over PostgreSQL; backups, key rotation, logs.',
    pageOrder: ['self-hosting', 'scaling'],
  },
};

const SECTION_ORDER = Object.keys(SECTIONS);

/** `self-hosting` -> `Self hosting`: the title of a section nobody described yet. */
export const titleFromName = (name: string): string => {
  const words = name.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

export function sectionInfo(section: string): SectionInfo {
  return SECTIONS[section] ?? { title: titleFromName(section), summary: '', pageOrder: [] };
}

function byOrder(order: readonly string[]): (a: string, b: string) => number {
  const rank = (name: string) => {
    const i = order.indexOf(name);
    return i === -1 ? order.length : i;
  };
  return (a, b) => rank(a) - rank(b) || a.localeCompare(b);
}

export const compareSections = byOrder(SECTION_ORDER);
export const comparePages = (section: string) => byOrder(sectionInfo(section).pageOrder);
