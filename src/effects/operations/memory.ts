import type { NewOperation, OperationOutcome, OperationRecord, OperationStore } from "./types.js";

const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

/** The operation table in memory, for tests and simulation. Same rules as the SQL stores. */
export class MemoryOperationStore implements OperationStore {
  readonly backend = "memory";
  private readonly rows = new Map<string, OperationRecord>();

  async migrate(): Promise<void> {}

  async insertIfAbsent(op: NewOperation): Promise<boolean> {
    if (this.rows.has(op.key)) return false;
    this.rows.set(op.key, {
      key: op.key,
      requestHash: op.requestHash,
      status: "processing",
      token: op.token,
      attempt: 1,
      outcome: null,
      startedAt: op.startedAt,
      completedAt: null,
    });
    return true;
  }

  async get(key: string): Promise<OperationRecord | undefined> {
    return copy(this.rows.get(key));
  }

  async takeOver(key: string, expectedToken: string, newToken: string, now: number): Promise<boolean> {
    const row = this.rows.get(key);
    if (row?.status !== "processing" || row.token !== expectedToken) return false;
    Object.assign(row, { token: newToken, attempt: row.attempt + 1, startedAt: now });
    return true;
  }

  async complete(key: string, token: string, outcome: OperationOutcome, now: number): Promise<boolean> {
    const row = this.rows.get(key);
    if (row?.status !== "processing" || row.token !== token) return false;
    Object.assign(row, { status: "done", outcome: copy(outcome), completedAt: now });
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    const row = this.rows.get(key);
    if (row?.status !== "processing" || row.token !== token) return false;
    this.rows.delete(key);
    return true;
  }

  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const [key, row] of this.rows) {
      if (row.status === "done" && row.completedAt !== null && row.completedAt < before) {
        this.rows.delete(key);
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {}
}

export const memoryOperationStore = (): MemoryOperationStore => new MemoryOperationStore();
