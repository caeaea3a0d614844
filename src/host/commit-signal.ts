import type { Commit, CommitResult, EventRecord, Journal, OutboxUpdate } from "../journal/types.js";

/**
 * Called after a write that touched the watched key. For a stream, with the records the commit
 * appended to it (none when the commit appended nothing there); for an outbox row, and for
 * `watchAll`, with nothing.
 */
export type Listener = (appended?: readonly EventRecord[]) => void;

/** A key a write touched, and for a stream the records it appended. */
type Touched = { key: string | undefined; appended?: readonly EventRecord[] };

/**
 * A journal that tells in-process waiters which streams and outbox rows a write touched, and
 * what a commit appended to its stream (the records `commit` returned), so that a waiter on a
 * stream follows this process's commits without reading the journal again. It is the journal
 * itself behind a proxy: every call goes to it unchanged; `commit`, `updateOutbox` and
 * `forceOutbox` additionally wake the listeners of the keys they touched, in the turn their
 * promise resolves, before their caller goes on. With no listener at that moment a write costs
 * one promise reaction and a size check.
 *
 * Every write is signalled, also one that began while nobody listened: a waiter that registers
 * while a write is in flight may read the journal before that write lands (two connections on
 * PostgreSQL), and then only this signal tells it, at once, what its poll would find 25 ms or
 * more later.
 *
 * It sees only writes made through it (this process's runtime, dispatchers and consumers):
 * another process's commits reach a waiter through `journal.onOutbox` (PostgreSQL NOTIFY) or
 * the waiter's poll.
 */
export class CommitSignal {
  readonly journal: Journal;
  private readonly byKey = new Map<string, Set<Listener>>();
  private readonly anyKey = new Set<Listener>();

  constructor(target: Journal) {
    const bound = new Map<PropertyKey, unknown>();
    // Who listens is asked when the write returns, not when it starts (see above).
    const after = <T>(write: Promise<T>, touched: (result: T) => Touched[]): Promise<T> =>
      write.then((result) => {
        if (this.listening) this.fire(touched(result));
        return result;
      });
    const row = (id: string) => (changed: boolean) => (changed ? [{ key: id }] : []);
    const wrapped: Partial<Journal> = {
      commit: (commit: Commit) =>
        after(target.commit(commit), (result: CommitResult) => [
          { key: commit.stream, appended: result.events },
          ...(commit.outboxDone ?? []).map((done) => ({ key: done.id })),
        ]),
      updateOutbox: (id: string, owner: string, update: OutboxUpdate, now: number) =>
        after(target.updateOutbox(id, owner, update, now), row(id)),
      forceOutbox: (id: string, update: OutboxUpdate, now: number) =>
        after(target.forceOutbox(id, update, now), row(id)),
    };
    this.journal = new Proxy(target, {
      get(object, property) {
        if (property in wrapped) return wrapped[property as keyof Journal];
        const value = Reflect.get(object, property, object);
        if (typeof value !== "function") return value;
        // Bound once per method: back ends keep private state that `this` must reach.
        let method = bound.get(property);
        if (!method) {
          method = value.bind(object);
          bound.set(property, method);
        }
        return method;
      },
    });
  }

  /**
   * Call `listener` after every write that touches `key` (a stream or an outbox row id); for a
   * stream, with what the commit appended. Only the listeners of the keys a write touched are
   * called: a commit on another stream wakes nobody watching this one.
   */
  watch(key: string, listener: Listener): () => void {
    let set = this.byKey.get(key);
    if (!set) {
      set = new Set();
      this.byKey.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byKey.get(key) === set) this.byKey.delete(key);
    };
  }

  /** Call `listener` after every write. */
  watchAll(listener: Listener): () => void {
    this.anyKey.add(listener);
    return () => this.anyKey.delete(listener);
  }

  /** Listeners registered now (0 when nobody waits: then writes fire nothing). */
  get watchers(): number {
    let count = this.anyKey.size;
    for (const set of this.byKey.values()) count += set.size;
    return count;
  }

  /** Wake every `watchAll` listener: something the journal does not see changed (a delivery ended). */
  poke(): void {
    for (const listener of this.anyKey) listener();
  }

  private get listening(): boolean {
    return this.byKey.size > 0 || this.anyKey.size > 0;
  }

  private fire(touched: Touched[]): void {
    for (const listener of this.anyKey) listener();
    for (const { key, appended } of touched) {
      if (key === undefined) continue;
      for (const listener of this.byKey.get(key) ?? []) listener(appended);
    }
  }
}
