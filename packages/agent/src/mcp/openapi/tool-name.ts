/** MCP tool names here: 1 to 64 of [A-Za-z0-9_-] (what every MCP host accepts). */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A name from an `operationId` (invalid characters become `_`), or from method and path without one. */
export function derivedToolName(operationId: unknown, method: string, path: string): string {
  const fromId = typeof operationId === 'string' ? sanitize(operationId) : '';
  return fromId !== '' ? fromId : sanitize(`${method.toLowerCase()}_${path}`);
}

function sanitize(raw: string): string {
  return raw
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
}
