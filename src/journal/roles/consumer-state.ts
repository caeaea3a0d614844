export interface CheckpointRecord {
  consumer: string;
  /** A source stream (`aggregateId` of the producer). */
  source: string;
  version: number;
  updatedAt: number;
}

export interface ParkedRecord {
  consumer: string;
  source: string;
  version: number;
  message: unknown;
  parkedAt: number;
}

/** A checkpoint set by a commit; with `expected`, a guard that refuses the commit unless it holds. */
export interface CheckpointWrite {
  consumer: string;
  source: string;
  version: number;
  expected?: number | undefined;
}

/** What `forgetConsumer` deleted. */
export interface ForgottenConsumer {
  inbox: number;
  checkpoints: number;
  parked: number;
}

/** A consumer's part of a commit (see `Commit`). */
export interface ConsumerStateWrites {
  checkpoint?: CheckpointWrite | undefined;
  checkpoints?: CheckpointWrite[] | undefined;
  park?: Omit<ParkedRecord, "parkedAt">[] | undefined;
  unpark?: { consumer: string; source: string; version: number }[] | undefined;
}

/** Consumer state as it is read: checkpoints and parked messages. */
export interface ConsumerStateReader {
  getCheckpoint(consumer: string, source: string): Promise<number>;
  listParked(consumer: string, source?: string): Promise<ParkedRecord[]>;
  /** The message parked at one version of a source, if any: a point read, however many are parked. */
  getParked(consumer: string, source: string, version: number): Promise<ParkedRecord | undefined>;
}

/**
 * What a consumer of integration events keeps between deliveries: per source stream the version it
 * has applied (its checkpoint) and the messages that arrived ahead of it (parked). Written by a
 * commit (`Commit.checkpoint(s)`, `Commit.park`, `Commit.unpark`); forgotten whole when a
 * projection is rebuilt or a consumer retired.
 */
export interface ConsumerState extends ConsumerStateReader {
  /**
   * Forget what a consumer has handled: its inbox rows, checkpoints and parked messages, in one
   * transaction (dead letters stay, for the record). With `keepReader`, its position in the
   * published log (the checkpoint under `PUBLISHED_READER_SOURCE`) stays. Used by a projection's
   * rebuild (which then consumes everything again under that name) and to retire a consumer, so
   * that it no longer holds back the published log's retention.
   */
  forgetConsumer(consumer: string, options?: { keepReader?: boolean }): Promise<ForgottenConsumer>;
}
