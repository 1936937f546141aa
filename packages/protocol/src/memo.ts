/**
 * The last answers of a pure function of a string, kept by the exact input: at most `max`, the
 * oldest dropped first. For the few strings a verifier sees on every request (a site's URLs, an
 * agent's proof header, a pass), where computing the answer costs more than looking it up.
 * Only what the caller puts in is kept: callers store accepted inputs only.
 */
export class Memo<V> {
  private readonly kept = new Map<string, V>();

  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    return this.kept.get(key);
  }

  set(key: string, value: V): V {
    if (this.kept.size >= this.max && !this.kept.has(key)) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(key, value);
    return value;
  }
}
