/** The latest `limit` ids seen, the oldest forgotten first: a set that cannot grow without end. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    for (const oldest of this.ids) {
      if (this.ids.size <= this.limit) {
        return;
      }
      this.ids.delete(oldest);
    }
  }
}
