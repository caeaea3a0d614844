import { InvalidInputError, NotRegisteredError } from "../base/errors.js";
import type { Clock } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { DeadLetterFilter, DeadLetterRecord, DeadLetterStore } from "../journal/types.js";
import type { DeadLetterReason } from "./conflicts.js";
import type { Consumer } from "./consumer.js";
import type { HandleResult } from "./handlers.js";

/** What a consumer stores as a dead letter's payload: the message as it arrived. */
export interface DeadLetterPayload {
  /** Null for a parked version that failed when released: replay then verifies the signature alone. */
  subject: string | null;
  /** The raw body, exactly as delivered (it may not parse). Replay decodes it again. */
  body: string;
  /** The parsed envelope when the body did parse, for reading. */
  envelope: unknown;
  /**
   * `invalid`: the body is not a valid envelope; `conflict`: it contradicts a message already
   * handled (`conflict` holds what was held); `unhandled`: a sequenced consumer has no handler
   * for it (its version is not consumed); `failed`: the handler or the store refused it.
   * Absent on letters written before reasons were stored.
   */
  reason?: DeadLetterReason;
  conflict?: { kind: "payload" | "version"; held: unknown };
}

export function deadLetterBody(record: DeadLetterRecord): string {
  const payload = record.payload as Partial<DeadLetterPayload> | null;
  if (payload && typeof payload.body === "string") return payload.body;
  // Written by something else than a Consumer: replay the payload itself as the message.
  return JSON.stringify(payload);
}

export type ReplayResult = HandleResult & { id: string };

/**
 * Operator API over dead letters: list, show, replay, discard.
 *
 * Replay sends the stored body through the owning consumer's normal path: the inbox suppresses a
 * message that was applied meanwhile, and a sequenced message may park behind a gap. The letter
 * is marked `replayed` only after that path committed; if it throws, the letter stays open and
 * the error is returned to the operator. A crash between the two leaves it open; replaying again
 * is then answered by the inbox as a duplicate and marks it.
 */
export class DeadLetters {
  private readonly consumers = new Map<string, Consumer>();
  private readonly clock: Clock;

  constructor(
    private readonly journal: DeadLetterStore,
    options: { consumers?: Consumer[]; clock?: Clock } = {},
  ) {
    for (const consumer of options.consumers ?? []) this.consumers.set(consumer.name, consumer);
    this.clock = resolveEnvironment(options).clock;
  }

  register(consumer: Consumer): this {
    this.consumers.set(consumer.name, consumer);
    return this;
  }

  list(filter: DeadLetterFilter = {}): Promise<DeadLetterRecord[]> {
    return this.journal.listDeadLetters(filter);
  }

  async show(id: string): Promise<DeadLetterRecord> {
    const record = await this.journal.getDeadLetter(id);
    if (!record) throw new InvalidInputError(`no dead letter "${id}"`);
    return record;
  }

  async replay(id: string): Promise<ReplayResult> {
    const record = await this.show(id);
    if (record.status !== "open") throw new InvalidInputError(`dead letter "${id}" is already ${record.status}`);
    const consumer = this.consumers.get(record.consumer);
    if (!consumer) throw new NotRegisteredError(`no consumer "${record.consumer}" is registered for replay`);
    const subject = (record.payload as Partial<DeadLetterPayload> | null)?.subject;
    const result = await consumer.replayBody(deadLetterBody(record), typeof subject === "string" ? subject : undefined);
    await this.journal.resolveDeadLetter(id, "replayed", this.clock.now());
    return { ...result, id };
  }

  async discard(id: string): Promise<void> {
    const record = await this.show(id);
    if (record.status !== "open") throw new InvalidInputError(`dead letter "${id}" is already ${record.status}`);
    await this.journal.resolveDeadLetter(id, "discarded", this.clock.now());
  }
}
