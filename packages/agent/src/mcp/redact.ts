/**
 * Every credential of the agent is a JWT (pass, DPoP proof, step-up token, agent JWT): anything
 * shaped like one is replaced before text from outside (a site's answer) or a log line goes out, so
 * an answer or message that happens to quote one never reaches the model or a log.
 */
export function redactTokens(text: string): string {
  return text.replace(/eyJ[\w-]{2,}\.[\w-]{2,}\.[\w-]*/g, '[credential removed]');
}
