export interface NewDeadLetter {
  id: string;
  consumer: string;
  messageId: string | null;
  payload: unknown;
  error: string;
  stack: string | null;
  attempts: number;
  firstFailedAt: number;
  lastFailedAt: number;
}

export interface DeadLetterRecord extends NewDeadLetter {
  status: "open" | "replayed" | "discarded";
  resolvedAt: number | null;
}

export interface DeadLetterFilter {
  consumer?: string;
  status?: DeadLetterRecord["status"];
  limit?: number;
}

/** The dead letters' part of a commit (see `Commit`). */
export interface DeadLetterWrites {
  deadLetters?: NewDeadLetter[] | undefined;
}

/** Dead letters as they are read. */
export interface DeadLetterReader {
  listDeadLetters(filter?: DeadLetterFilter): Promise<DeadLetterRecord[]>;
  getDeadLetter(id: string): Promise<DeadLetterRecord | undefined>;
}

/**
 * Dead letters: messages a consumer could not handle after its retries, kept for an operator who
 * replays or discards them. Written by a commit (`Commit.deadLetters`, inserted once per id).
 */
export interface DeadLetterStore extends DeadLetterReader {
  /** Mark a dead letter replayed or discarded. */
  resolveDeadLetter(id: string, status: "replayed" | "discarded", now: number): Promise<boolean>;
}
