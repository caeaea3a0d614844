import { MESSAGING_DEFAULTS } from "../base/defaults.js";
import { CheckpointConflictError, NotRegisteredError, RetriesExhaustedError } from "../base/errors.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Faults } from "../core/faults.js";
import type { Logger } from "../core/logger.js";
import { Mailboxes } from "../core/mailbox.js";
import type { Runtime } from "../core/runtime.js";
import { readState } from "../journal/state-reads.js";
import type { Commit, DocumentRecord, InboxRecord, StateAnswers, StateReads } from "../journal/types.js";
import { heldMessage, requireSameMessage } from "./conflicts.js";
import { type ConsumerCounts, consumerCounts } from "./consumer-counts.js";
import type { ConsumerJournal, ConsumerOptions, OrderingMode } from "./consumer-options.js";
import type { Envelope } from "./envelope.js";
import type { ConsumerHandler, HandleResult, ProjectTools } from "./handlers.js";
import { type MessagingMetrics, messagingMetrics } from "./metrics.js";
import type { Verifier } from "./signing.js";
import { upcastingHandler } from "./upcast-handler.js";

/**
 * What every step of a `Consumer` shares: its options resolved to their defaults, its locks and
 * counts, and the small steps both ordering modes take (the inbox row and its check, the command
 * send, the projection of a document, the retry after a conflict with another instance).
 * One per consumer, built by its constructor; the steps' own state lives with them (the delivery
 * path's deferrals, the release's failure counts, the hand-over intake's copies).
 */
export class ConsumerContext {
  readonly name: string;
  readonly mode: OrderingMode;
  readonly journal: ConsumerJournal;
  readonly handler: ConsumerHandler;
  readonly runtime: Runtime | undefined;
  readonly commands: ConsumerOptions["commands"];
  readonly types: ReadonlySet<string> | undefined;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly faults: Faults;
  readonly logger: Logger;
  readonly metrics: MessagingMetrics;
  /** This consumer's counts, each moved with its series (see `ConsumerCounts`). */
  readonly counts: ConsumerCounts;
  readonly maxDeliveries: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly deferBaseMs: number;
  readonly deferMaxMs: number;
  readonly maxConflictRetries: number;
  readonly verifier: Verifier | undefined;
  readonly rebuilding: boolean;
  /** Per source stream (`src:`) and per document (`doc:`): one handling at a time in this process. */
  readonly locks = new Mailboxes();
  /**
   * Per eventId, the first failure of it in this process: when, and at which delivery. Set and
   * cleared by the delivery path, read by every dead letter (its `firstFailedAt`).
   */
  readonly firstFailure = new Map<string, { at: number; attempt: number }>();

  constructor(options: ConsumerOptions) {
    this.name = options.name;
    this.mode = options.mode ?? "facts";
    this.journal = options.journal;
    this.handler = upcastingHandler(options.name, options.handler, options.upcast);
    this.runtime = options.runtime;
    this.commands = options.commands;
    this.types = options.types ? new Set(options.types) : undefined;
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.ids = env.ids;
    this.faults = env.faults;
    this.logger = env.logger;
    this.metrics = options.metrics ?? messagingMetrics(env.registry);
    this.counts = consumerCounts(this.metrics, this.name);
    this.maxDeliveries = options.maxDeliveries ?? MESSAGING_DEFAULTS.maxDeliveries;
    this.retryBaseMs = options.retryBaseMs ?? MESSAGING_DEFAULTS.retryBaseMs;
    this.retryMaxMs = options.retryMaxMs ?? MESSAGING_DEFAULTS.retryMaxMs;
    this.deferBaseMs = options.deferBaseMs ?? MESSAGING_DEFAULTS.deferBaseMs;
    this.deferMaxMs = options.deferMaxMs ?? MESSAGING_DEFAULTS.deferMaxMs;
    this.maxConflictRetries = options.maxConflictRetries ?? MESSAGING_DEFAULTS.consumerConflictRetries;
    this.verifier = options.verifier;
    this.rebuilding = options.rebuilding ?? false;
    if (this.handler.kind === "command" && !this.runtime) {
      throw new NotRegisteredError(`consumer "${this.name}" routes commands but was given no runtime`);
    }
  }

  count(result: HandleResult): HandleResult {
    const key = { applied: "applied", duplicate: "duplicates", parked: "parked", ignored: "ignored" } as const;
    // Its releases are counted where they happen (`ParkedRelease.releaseParked`).
    this.counts[key[result.outcome]].inc();
    return result;
  }

  /** The consumer's inbox row for a handled message, with its hash (see `./conflicts.ts`). */
  inboxRow(envelope: Envelope): NonNullable<Commit["inbox"]> {
    return { consumer: this.name, messageId: envelope.eventId, reply: heldMessage(envelope) };
  }

  /** True for an exact duplicate; throws `MessageConflictError` when the eventId was handled with other content. */
  async alreadyHandled(envelope: Envelope): Promise<boolean> {
    return this.handledAs(envelope, await this.journal.getInbox(this.name, envelope.eventId));
  }

  /** `alreadyHandled` on an inbox row already read (`held`, this consumer's row for the eventId, if any). */
  handledAs(envelope: Envelope, held: InboxRecord | undefined): boolean {
    if (!held) return false;
    requireSameMessage(this.name, envelope, held);
    return true;
  }

  /** Several reads of consumer state at once: one round trip and one view where the journal can. */
  read(reads: StateReads): Promise<StateAnswers> {
    return readState(this.journal, reads);
  }

  /**
   * A projection's document and its revision (the guard checkpoint `<name>#doc`), read together.
   * Call under the document's lock.
   */
  async documentAndRevision(
    collection: string,
    id: string,
  ): Promise<{ guard: { consumer: string; source: string }; revision: number; current: DocumentRecord | undefined }> {
    const guard = { consumer: `${this.name}#doc`, source: `${collection}/${id}` };
    const answers = await this.read({ checkpoints: [guard], documents: [{ collection, id }] });
    return { guard, revision: answers.checkpoints[0] ?? 0, current: answers.documents[0] };
  }

  /**
   * The document's next value, and the facts whose transition the projection found backwards:
   * counted by the caller once its commit lands (`countBackwards`), so that a duplicate thrown away
   * at the commit, or an attempt retried after a conflict, counts nothing.
   */
  projectDocument(
    envelope: Envelope,
    id: string,
    current: DocumentRecord | undefined,
  ): { documents: Commit["documents"]; backwards: string[] } {
    const handler = this.handler;
    const backwards: string[] = [];
    if (handler.kind !== "projection") return { documents: [], backwards };
    const tools: ProjectTools = {
      advance: (fact, m, from, to) => {
        const result = m.advance(from, to);
        if (result.backwards) backwards.push(fact);
        return result;
      },
    };
    const next = handler.project(current?.doc, envelope, tools);
    return { documents: next === undefined ? [] : [{ collection: handler.collection, id, doc: next }], backwards };
  }

  countBackwards(facts: readonly string[]): void {
    for (const fact of facts) this.counts.backwards.onLabels(this.metrics.backwards, { consumer: this.name, fact });
  }

  /** Returns "applied" or "duplicate" as the actor saw it. */
  async sendCommand(envelope: Envelope): Promise<"applied" | "duplicate" | "ignored"> {
    if (this.handler.kind !== "command" || !this.runtime) return "ignored";
    const target = this.handler.route(envelope);
    if (!target) return "ignored";
    const result = await (this.commands ?? this.runtime).send(target.address, target.command, {
      messageId: envelope.eventId,
      causationId: envelope.eventId,
      correlationId: envelope.correlationId,
      ...(target.expectNew === true ? { expectNew: true } : {}),
    });
    return result.duplicate ? "duplicate" : "applied";
  }

  /** Run `work` again after each optimistic-concurrency conflict, up to `maxConflictRetries` times. */
  async withConflictRetries<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; attempt <= this.maxConflictRetries; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (error instanceof CheckpointConflictError) continue;
        throw error;
      }
    }
    throw new RetriesExhaustedError(
      `consumer "${this.name}" kept conflicting with another instance`,
      this.maxConflictRetries + 1,
    );
  }
}
