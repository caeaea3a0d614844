/**
 * One serial queue per key: work for one actor never interleaves, different actors run
 * concurrently. A failed task does not poison the queue behind it.
 */
export class Mailboxes {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** True when nothing is queued or running for `key`. */
  idle(key: string): boolean {
    return !this.tails.has(key);
  }

  get size(): number {
    return this.tails.size;
  }
}
