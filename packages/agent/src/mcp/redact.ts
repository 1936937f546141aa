/**
 * Log lines pass through this last guard: anything shaped like a JWT (an agent JWT, a pass, a DPoP
 * proof, a step-up token) is replaced, so a message that happened to quote one never reaches a log.
 */
export function redactTokens(text: string): string {
  return text.replace(/eyJ[\w-]*\.[\w-]*\.[\w-]*/g, '[redacted token]');
}
