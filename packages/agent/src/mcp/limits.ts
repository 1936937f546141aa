/** The limits of decisions §27, in one place. */
export const MCP_LIMITS = {
  /** Text of a tool result, and a site's answer body within it. */
  resultTextBytes: 64 * 1024,
  /** A request body the model asks a site call to carry. */
  requestBodyBytes: 1024 * 1024,
  /** One site call (the request, its pass renewal and reading its answer). */
  siteCallMs: 30_000,
  /** How long one tool call waits for the owner before answering `pending`. */
  defaultWaitSeconds: 240,
  maxWaitSeconds: 290,
  /** At most one progress notification per this many ms. */
  progressEveryMs: 5_000,
} as const;
