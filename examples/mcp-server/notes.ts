/** Each owner's notes, in memory, by title: every owner starts with the same three. */
export type Note = { title: string; text: string };

const FIRST_NOTES: readonly Note[] = [
  { title: 'Shopping list', text: 'milk, eggs, coffee' },
  { title: 'Trip to Lisbon', text: 'book the train, pack the charger' },
  { title: 'Book club', text: 'read chapter 3 by Thursday' },
];

export class Notes {
  private readonly byOwner = new Map<string, Map<string, Note>>();

  /** The owner's notes (the pass's `userId`: the same person at every Mandate-protected server). */
  private of(owner: string): Map<string, Note> {
    let notes = this.byOwner.get(owner);
    if (notes === undefined) {
      notes = new Map(FIRST_NOTES.map((n) => [n.title, { ...n }]));
      this.byOwner.set(owner, notes);
    }
    return notes;
  }

  list(owner: string): Note[] {
    return [...this.of(owner).values()];
  }

  has(owner: string, title: string): boolean {
    return this.of(owner).has(title);
  }

  /** True when the note was there (and is now gone). */
  delete(owner: string, title: string): boolean {
    return this.of(owner).delete(title);
  }
}
