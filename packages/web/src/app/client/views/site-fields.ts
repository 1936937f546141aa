// What the register and edit forms of a site have in common: reading redirect URIs as typed.

/**
 * Redirect URIs as typed, one per line, blanks dropped. Whether each is a valid address is the
 * server's to say: its detail names the bad one and why (https only, one host, ...).
 */
export function uriLines(text: string): string[] {
  return text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
}

export const NO_URIS = 'Add at least one redirect URI: the address on your site that receives the sign-in, like https://example.com/callback.';
export const NO_NAME = 'Give the site a name people will recognise: it is shown when their agent signs in there.';
