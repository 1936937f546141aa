// The agent's part of an OpenID Connect sign-in: the site sent it to Mandate's /oidc/authorize; it
// calls that address with its proof, waits while its owner decides (the first time at a site), and
// gets back the address to return to the site with (…?code=…&iss=…, or ?error=access_denied).
// `agent` is a MandateAgent (@mandate/agent): signInHeaders(url) signs the X-Service-Agent header.
type Agent = { signInHeaders(url: string): Promise<Record<string, string>> };

export async function followAuthorize(agent: Agent, authorizeUrl: string, pollMs = 2000): Promise<string> {
  const res = await fetch(authorizeUrl, { redirect: 'manual', headers: await agent.signInHeaders(authorizeUrl) });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`/oidc/authorize answered ${res.status}: ${await res.text()}`);
  const next = new URL(location, authorizeUrl);
  const waiting = next.origin === new URL(authorizeUrl).origin && next.pathname.startsWith('/oidc/authorize/wait/');
  if (!waiting) return next.href; // a live grant covers the sign-in: back to the site at once
  for (;;) {
    const status = await fetch(`${next.origin}${next.pathname}/status${next.search}`);
    const answer = (await status.json()) as { status?: string; redirect?: string };
    if (answer.redirect) return answer.redirect; // the owner approved (or denied) with their passkey
    if (answer.status !== 'pending') throw new Error(`wait status ${status.status}: ${JSON.stringify(answer)}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
