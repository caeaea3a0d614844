/** The dedup record a commit writes for the message it handles. */
export interface InboxEntry {
  /** Who received: an actor's stream name, or a consumer's name. */
  consumer: string;
  messageId: string;
  reply: unknown;
  /**
   * The message is the final outcome of this outbox row, which the commit lists in `outboxDone`.
   * While `consumer` holds the row (it is the row's stream, and the row is an effect or a message,
   * not an event) the row's done transition is the message's record and no inbox row is written:
   * a row not done yet is marked done by this commit; a row already done fails the commit with
   * `DuplicateMessageError`, nothing written. A row not held (pruned, or never there) takes the
   * inbox row as without `outcomeOf`. Only with a null reply: a done row keeps none.
   *
   * Why: every step of an effect commits its outcome, and the row's done transition is written
   * anyway; the inbox row beside it was a second record of the same fact (a heap row and two index
   * entries per step on PostgreSQL). The row lives at least as long as the inbox row would (outbox
   * retention may not be shorter than the redelivery window), so the dedup window is unchanged.
   */
  outcomeOf?: string | undefined;
}

export interface InboxRecord {
  /** Who received: an actor's stream name, or a consumer's name. */
  consumer: string;
  messageId: string;
  reply: unknown;
  recordedAt: number;
}

/** The inbox's part of a commit (see `Commit`). */
export interface InboxWrite {
  inbox?: InboxEntry | undefined;
}

/** The inbox as it is read: one message's record. */
export interface InboxReader {
  getInbox(consumer: string, messageId: string): Promise<InboxRecord | undefined>;
}

/**
 * The inbox: the dedup record of each message a commit handled, so a message delivered twice
 * changes nothing the second time. Written by a commit (`Commit.inbox`), read back for the reply
 * of a message already handled, pruned after the redelivery window.
 */
export interface InboxStore extends InboxReader {
  /** Delete inbox rows recorded strictly before `before`. Returns how many. */
  pruneInbox(before: number): Promise<number>;
}
