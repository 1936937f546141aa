/** Form or query parameters, one value each, and the names sent more than once (OAuth refuses repeats). */
export function params(source: URLSearchParams): { map: Map<string, string>; repeated: string[] } {
  const map = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [k, v] of source) {
    if (map.has(k)) repeated.add(k);
    else map.set(k, v);
  }
  return { map, repeated: [...repeated] };
}
