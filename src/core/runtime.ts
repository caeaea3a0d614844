import { context } from "@opentelemetry/api";
import type { Registry } from "prom-client";
import { RUNTIME_DEFAULTS } from "../base/defaults.js";
import {
  CheckpointConflictError,
  DuplicateMessageError,
  FencedOutError,
  NoDecisionError,
  NotOwnerError,
  NotRegisteredError,
  RetriesExhaustedError,
  RuntimeClosedError,
  UndeclaredEffectError,
  VersionConflictError,
} from "../base/errors.js";
import { assertStorableText } from "../base/storable-text.js";
import { outcomeRecord } from "../journal/outcome-record.js";
import { newOutboxRow } from "../journal/rows.js";
import type {
  Commit,
  CommitResult,
  ConsumerStateReader,
  EventRecord,
  EventStore,
  InboxReader,
  OutboxReader,
  OutboxRow,
} from "../journal/types.js";
import { type OwnershipMetrics, ownershipMetrics } from "../observability/ownership-metrics.js";
import { actorMetrics, type RuntimeMetrics, runtimeMetrics } from "../observability/runtime-metrics.js";
import { commandSpan, timedCommit, traceCarrier } from "../observability/runtime-spans.js";
import { SeriesTally, Tally, valuesOf } from "../observability/tally.js";
import { type AnyActor, requestableKinds } from "./actor.js";
import { parseAddress } from "./address.js";
import { buildCommit } from "./build-commit.js";
import type { Clock, IdGenerator, Random } from "./clock.js";
import { checkCommand } from "./command-schema.js";
import {
  type Decision,
  finalOutcome,
  isRoutedOutcome,
  outcomeMessageId,
  type RoutedOutcome,
  type Typed,
} from "./decider.js";
import { resolveEnvironment } from "./environment.js";
import type { Faults } from "./faults.js";
import type { HandOver } from "./hand-over.js";
import { type CommandPrint, commandPrint, readHeld, requireSameCommand } from "./held-command.js";
import type { Logger } from "./logger.js";
import { Mailboxes } from "./mailbox.js";
import {
  HELD_PUBLISHED_SOURCES,
  holdPublished,
  needsStamp,
  type PublishedCounts,
  stampPublished,
} from "./published-versions.js";
import { evolveRecords, recover } from "./recovery.js";
import { checkSendInput } from "./send-input.js";
import { SliceGate } from "./slice-gate.js";
import { type Ownership, ownsEverything, SLICE_FENCE_CONSUMER, sliceOfAddress } from "./slices.js";
import { type SnapshotMetrics, snapshotMetrics } from "./snapshot-metrics.js";
import { checkSchemas } from "./upcast.js";

/**
 * What a runtime uses of the journal: it rebuilds actors from their streams and snapshots, commits
 * their decisions, and reads a handled message's record (an inbox row, or the outbox row a final
 * outcome finished).
 */
export type RuntimeJournal = Pick<EventStore, "commit" | "readStream" | "streamVersion" | "readFromSnapshot"> &
  Pick<ConsumerStateReader, "getCheckpoint"> &
  InboxReader &
  Pick<OutboxReader, "getOutbox">;

export interface RuntimeOptions {
  journal: RuntimeJournal;
  actors: AnyActor[];
  clock?: Clock;
  ids?: IdGenerator;
  /** Jitter between conflict retries. */
  random?: Random;
  faults?: Faults;
  logger?: Logger;
  /** Most actors kept in memory; the least recently used idle ones are passivated beyond it. */
  maxActive?: number;
  /** An actor unused for this long (ms) is passivated at the next opportunity. */
  idleMs?: number;
  /** Reload-and-decide-again attempts after a version conflict before giving up. */
  maxConflictRetries?: number;
  /**
   * Where the runtime's metrics go (see `runtimeMetrics`, and `oncely_snapshot_{migrated,ignored}_total`);
   * a private registry by default.
   */
  registry?: Registry;
  /**
   * Which actors this runtime may run (default `ownsEverything()`: all of them, no fence). A command
   * for an actor of a slice not owned is refused with `NotOwnerError` before anything is read; a
   * commit carries the slice's fence when `ownership.fence(slice)` gives one, and a commit the fence
   * refuses fails with `FencedOutError` and drops the slice (see docs/design/ownership.md).
   */
  ownership?: Ownership;
}

export interface SendOptions {
  /**
   * Dedup id: the same command again under this id gets the stored reply and changes nothing;
   * another command under it is refused with `MessageConflictError` (see `held-command.ts`).
   */
  messageId?: string;
  causationId?: string;
  correlationId?: string;
  /**
   * The caller expects the actor to be new (an id it has just made up, say): an actor this runtime
   * does not hold is not read first but decided from `initialState`, and its commit expects an empty
   * stream, as an event store's "no stream" append does. When the actor has history after all, the
   * commit conflicts (nothing of it is written), the runtime reads the actor and decides again, as
   * for any conflict; a refusal on the new state is checked against the stream's version the same
   * way. So the hint saves a read when it is right, costs a round trip when it is wrong, and never
   * changes an outcome. Ignored for an actor already held in memory.
   */
  expectNew?: boolean;
  /**
   * The outbox row a dispatcher is delivering with this send. A `CommandRouter` never forwards a
   * command into the very row that carries it (it would wait on itself until its timeout): it throws
   * `NotOwnerError`, and the dispatcher releases the row to the slice's new owner.
   */
  deliveringRow?: string;
}

export interface SendResult {
  reply: unknown;
  /** Stream version after handling. */
  version: number;
  /** True when the message id had been handled before (with this same command) and the stored reply was returned. */
  duplicate: boolean;
  events: EventRecord[];
}

interface Activation {
  state: unknown;
  version: number;
  lastUsed: number;
  /** Held without a read (`SendOptions.expectNew`) and not yet confirmed by a commit or a version read. */
  unverified: boolean;
  /**
   * Published counts this activation's commits wrote, per source (`stampPublished`): its later
   * publishes stamp from them instead of reading the checkpoint. Advanced only after a commit landed,
   * and gone with the activation (every failed commit drops it).
   */
  published?: PublishedCounts | undefined;
  /**
   * Held since its stream was empty (new, or recovered at version 0), every event since its own commit:
   * a source it holds no count for is taken as never published on, unread, on a command's first attempt
   * (`stampPublished`'s `assumeUnpublished`; a wrong guess is refused by the count's guard, and the retry
   * reads). Cleared once it holds as many counts as it keeps, since a count let go must be read again.
   */
  bornEmpty?: boolean | undefined;
}

/** A runtime's counts (`Runtime.stats`). */
export interface RuntimeStats {
  /** Commands handled by actors, duplicates included. */
  commands: number;
  /** Commands answered from an actor's inbox (handled before under the same message id). */
  duplicates: number;
  /** Commits refused because another writer moved the stream first (the command was decided again). */
  conflicts: number;
  /** Actors rebuilt from the journal into memory. */
  recoveries: number;
  /** Idle actors dropped from memory. */
  passivations: number;
}

/**
 * Hosts actors: one serial mailbox per address, state rebuilt from the journal, decisions
 * committed atomically with their outbox rows and inbox record. Nothing a decision asks for
 * leaves the process here: the dispatcher and relay read the outbox after the commit, or take
 * what they asked for at commit (`HandOver`), and a relay whose log is this journal's published
 * log has the commit append the events there (`HandOver.publish`).
 *
 * Failure window: if `journal.commit` throws for a reason other than a conflict (connection
 * lost), the commit may or may not have landed. The cached actor is dropped, the error is
 * rethrown, and the next command reloads from the journal; a retry with the same message id
 * is then answered from the inbox if the first commit did land.
 */
export class Runtime {
  readonly journal: RuntimeJournal;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly random: Random;
  readonly faults: Faults;
  readonly logger: Logger;
  private readonly definitions = new Map<string, AnyActor>();
  /** Per actor type that declares its effects, the kinds its decisions may request. */
  private readonly requestable = new Map<string, ReadonlySet<string>>();
  private readonly mailboxes = new Mailboxes();
  /** Insertion order is recency order: an entry is re-inserted on every use. */
  private readonly active = new Map<string, Activation>();
  private readonly maxActive: number;
  private readonly idleMs: number;
  private readonly maxConflictRetries: number;
  private readonly snapshotMetrics: SnapshotMetrics;
  private closed = false;
  /** Started dispatchers of this process that take rows at commit, asked in registration order. */
  private readonly handOvers = new Set<HandOver>();
  private readonly metrics: RuntimeMetrics;
  /** This runtime's counts, each moved with its series in `metrics` (see `stats`). */
  private readonly counts: {
    commands: Tally;
    duplicates: Tally;
    conflicts: Tally;
    recoveries: Tally;
    passivations: SeriesTally;
  };
  readonly ownership: Ownership;
  private readonly slices: SliceGate;
  private readonly ownershipMetrics: OwnershipMetrics;

  constructor(options: RuntimeOptions) {
    this.journal = options.journal;
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.ids = env.ids;
    this.random = env.random;
    this.faults = env.faults;
    this.logger = env.logger;
    this.maxActive = options.maxActive ?? RUNTIME_DEFAULTS.maxActive;
    this.idleMs = options.idleMs ?? RUNTIME_DEFAULTS.idleMs;
    this.maxConflictRetries = options.maxConflictRetries ?? RUNTIME_DEFAULTS.maxConflictRetries;
    this.snapshotMetrics = snapshotMetrics(env.registry);
    this.metrics = runtimeMetrics(env.registry);
    this.counts = {
      commands: new Tally(),
      duplicates: new Tally(),
      conflicts: new Tally(),
      recoveries: new Tally(),
      passivations: new SeriesTally(this.metrics.passivations),
    };
    this.ownership = options.ownership ?? ownsEverything();
    this.ownershipMetrics = ownershipMetrics(env.registry);
    this.slices = new SliceGate(this.ownership, (slices) => this.evictSlices(slices));
    for (const definition of options.actors) {
      if (this.definitions.has(definition.type)) {
        throw new NotRegisteredError(`actor type "${definition.type}" registered twice`);
      }
      checkSchemas(`actor type "${definition.type}"`, definition.events);
      this.definitions.set(definition.type, definition);
      const kinds = requestableKinds(definition);
      if (kinds) this.requestable.set(definition.type, kinds);
    }
  }

  has(type: string): boolean {
    return this.definitions.has(type);
  }

  definition(address: string) {
    const { type } = parseAddress(address);
    const definition = this.definitions.get(type);
    if (!definition) throw new NotRegisteredError(`no actor type "${type}" is registered (address "${address}")`);
    return definition;
  }

  /** Called by a dispatcher's start (active) and stop (not active); see `HandOver`. */
  handOver(dispatcher: HandOver, active: boolean): void {
    if (active) this.handOvers.add(dispatcher);
    else this.handOvers.delete(dispatcher);
  }

  /** Handle one command in the actor's mailbox. Resolves after the commit, with the reply. */
  send<C extends Typed>(address: string, command: C, options: SendOptions = {}): Promise<SendResult> {
    // Refused here, with the field named, rather than by the store after the decision ran.
    checkSendInput(address, command, options);
    const { messageId, causationId, correlationId } = options;
    assertStorableText("unstorable text in a command", { address, messageId, causationId, correlationId });
    const definition = this.definition(address);
    command = checkCommand(definition, address, command) as C;
    // Routed outcomes are exempt: the first final outcome of a key wins, whatever a later one says.
    const print = messageId === undefined || isRoutedOutcome(command) ? undefined : commandPrint(command, messageId);
    const slice = sliceOfAddress(address, this.ownership.sliceCount);
    if (!this.ownership.owns(slice)) return Promise.reject(new NotOwnerError(address, slice));
    const parent = context.active();
    return this.slices.track(slice, () =>
      this.mailboxes.run(address, () =>
        commandSpan(address, command.type, options, parent, () =>
          this.handle(definition, address, command, options, print, slice),
        ),
      ),
    );
  }

  /** Parse a command from outside with the actor's `parseCommand`, then send it. */
  parseAndSend(address: string, input: unknown, options: SendOptions = {}): Promise<SendResult> {
    const definition = this.definition(address);
    const command = definition.parseCommand ? definition.parseCommand(input) : (input as Typed);
    return this.send(address, command, options);
  }

  /**
   * Current state of an actor, read in its mailbox. A cached actor first catches up with events
   * other processes appended since (one read of the stream's tail), so a read never returns a
   * state older than what the journal held when it started. Commands need no such read: a
   * stale cache makes their commit conflict, and they reload.
   */
  state<S = unknown>(address: string): Promise<{ state: S; version: number }> {
    const definition = this.definition(address);
    return this.mailboxes.run(address, async () => {
      const cached = this.active.has(address);
      const activation = await this.activate(definition, address);
      if (cached) {
        const records = await this.journal.readStream(address, activation.version + 1);
        activation.state = evolveRecords(definition, activation.state, records);
        activation.version = records.at(-1)?.version ?? activation.version;
      }
      return { state: activation.state as S, version: activation.version };
    });
  }

  /** Drop an actor's (or every idle actor's) memory; the next command rebuilds it from the journal. */
  evict(address?: string): void {
    if (address !== undefined) {
      this.active.delete(address);
      return;
    }
    for (const key of [...this.active.keys()]) {
      if (this.mailboxes.idle(key)) this.active.delete(key);
    }
  }

  /**
   * This runtime's counts since it was built, read from the tallies that move its series
   * (`oncely_commands_total`, `oncely_inbox_duplicates_total`, `oncely_version_conflicts_total`,
   * `oncely_actor_recoveries_total`, `oncely_actor_passivations_total`), summed over actor types.
   */
  get stats(): RuntimeStats {
    return valuesOf(this.counts);
  }

  get activeCount(): number {
    return this.active.size;
  }

  close(): void {
    this.closed = true;
    this.slices.close();
    this.active.clear();
  }

  /** Drop the cached actors of `slices` (lost: another worker may write them; regained: stale). */
  private evictSlices(slices: ReadonlySet<number>): void {
    for (const address of [...this.active.keys()]) {
      if (slices.has(sliceOfAddress(address, this.ownership.sliceCount))) this.active.delete(address);
    }
  }
  private async handle(
    definition: AnyActor,
    address: string,
    command: Typed,
    options: SendOptions,
    print: CommandPrint | undefined,
    slice: number,
  ) {
    if (this.closed) throw new RuntimeClosedError("runtime is closed");
    this.counts.commands.on(actorMetrics(this.metrics, definition.type).commands);
    const outcome = isRoutedOutcome(command) ? command : undefined;
    const messageId = options.messageId ?? (outcome ? outcomeMessageId(outcome) : undefined);
    const { id } = parseAddress(address);

    for (let attempt = 0; attempt <= this.maxConflictRetries; attempt++) {
      // Checked again in the mailbox: the slice may have moved while the command waited its turn.
      if (!this.ownership.owns(slice)) throw new NotOwnerError(address, slice);
      const activation =
        attempt === 0 && options.expectNew === true && !this.active.has(address)
          ? this.activateNew(definition, address, id)
          : await this.activate(definition, address);
      const now = this.clock.now();
      // No inbox read before the write: the commit's inbox row is the duplicate check, and the
      // stored reply is read only when it conflicts (or when decide refuses a command it has seen).
      let decision: Decision;
      try {
        decision = definition.decide(command, activation.state, {
          address,
          id,
          now,
          messageId,
          version: activation.version,
        });
        if (typeof decision !== "object" || decision === null) {
          throw new NoDecisionError(definition.type, address, command.type);
        }
        this.requireDeclaredEffects(definition, address, decision);
      } catch (error) {
        const prior =
          messageId === undefined ? undefined : await this.priorReply(definition, address, messageId, outcome, print);
        if (prior) return prior;
        // A refusal decided on a cached state that another host has since moved past is no refusal
        // yet (an outcome for an effect that host requested, say): reload and decide again. A stale
        // cache is otherwise caught by the commit's version check, but a refusal commits nothing.
        if (this.active.has(address) && (await this.journal.streamVersion(address)) !== activation.version) {
          this.active.delete(address);
          continue;
        }
        activation.unverified = false; // the stream's version is the one held
        throw error;
      }
      const acceptedFault = this.faults.hit("command.accepted");
      if (acceptedFault) await acceptedFault;

      // Only a decision that publishes with no version of its own stamps (no await otherwise), and it
      // reads a count only for a source this activation has not committed a count for yet.
      const stamped = needsStamp(decision)
        ? await stampPublished(this.journal, decision, activation.published, attempt === 0 && activation.bornEmpty)
        : undefined;
      if (stamped) decision = stamped.decision;
      const token = this.ownership.fence(slice);
      const { commit, nextState } = buildCommit({
        definition,
        address,
        state: activation.state,
        version: activation.version,
        decision,
        messageId,
        options,
        outcome,
        print,
        now,
        ids: this.ids,
        trace: traceCarrier(),
        fence: token === undefined ? undefined : { slice, token },
        counters: stamped?.counters,
      });

      const publishedAtCommit = this.publishRows(commit);
      const leasedTo = this.leaseRows(commit);
      const beforeCommitFault = this.faults.hit("commit.before");
      if (beforeCommitFault) await beforeCommitFault;
      let result: CommitResult;
      try {
        result = await timedCommit(actorMetrics(this.metrics, definition.type), () => this.journal.commit(commit));
      } catch (error) {
        for (const taken of publishedAtCommit) taken.failed();
        // Our cached state may be stale (conflict, duplicate) or the commit's fate unknown: reload either way.
        // The held published counts go with it, so the retry reads them (a refused count among them).
        this.active.delete(address);
        if (error instanceof DuplicateMessageError && messageId !== undefined) {
          const prior = await this.priorReply(definition, address, messageId, outcome, print);
          if (prior) return prior;
        }
        if (
          token !== undefined &&
          error instanceof CheckpointConflictError &&
          error.consumer === SLICE_FENCE_CONSUMER
        ) {
          throw this.fencedOut(address, slice, token, error.actual);
        }
        if (
          error instanceof VersionConflictError ||
          error instanceof DuplicateMessageError ||
          error instanceof CheckpointConflictError // a publish count another commit advanced first
        ) {
          this.counts.conflicts.on(actorMetrics(this.metrics, definition.type).conflicts);
          // Two hosts of one actor that retry in lockstep can starve each other; a random
          // number of event-loop turns breaks the lockstep without tying us to wall time.
          await yieldTurns(Math.floor(this.random.next() * 2 ** Math.min(attempt + 1, 6)));
          continue;
        }
        throw error;
      }
      activation.state = nextState;
      activation.version = result.version;
      activation.unverified = false; // the commit expected this version and got it
      if (stamped) {
        activation.published = holdPublished(activation.published, stamped.counters);
        if ((activation.published?.size ?? 0) >= HELD_PUBLISHED_SOURCES) activation.bornEmpty = false;
      }
      for (const taken of publishedAtCommit) taken.committed();
      this.handRowsOver(commit, result, leasedTo);
      const afterCommitFault = this.faults.hit("commit.after");
      if (afterCommitFault) await afterCommitFault;
      return { reply: decision.reply, version: result.version, duplicate: false, events: result.events };
    }
    throw new RetriesExhaustedError(
      `command ${command.type} for ${address} kept conflicting with other writers`,
      this.maxConflictRetries + 1,
    );
  }

  /** Another worker took `slice`: drop it and its cached actors, count it, and say so. */
  private fencedOut(address: string, slice: number, token: number, current: number): FencedOutError {
    this.ownershipMetrics.fencedCommits.inc();
    this.ownership.fencedOut?.(slice, token);
    this.evictSlices(new Set([slice]));
    this.logger.warn({ address, slice, token, current }, "a commit was fenced out: another worker owns the slice");
    return new FencedOutError(address, slice, token, current);
  }

  /** A decision of an actor that declares its effects may request only those (and timers): else nothing is committed. */
  private requireDeclaredEffects(definition: AnyActor, address: string, decision: Decision): void {
    const kinds = this.requestable.get(definition.type);
    if (!kinds || !decision.effects) return;
    for (const effect of decision.effects) {
      if (!kinds.has(effect.kind)) {
        const declared = (definition.effects ?? []).map((declaredEffect: { kind: string }) => declaredEffect.kind);
        throw new UndeclaredEffectError(definition.type, address, effect.kind, declared);
      }
    }
  }

  /**
   * Event rows a local relay publishes in the commit itself (its transport's log is this journal's
   * published log, see `HandOver.publish`) leave the outbox: the commit appends their entries
   * instead. Returns what to run once the commit returned (their hand-over to local consumers).
   */
  private publishRows(commit: Commit): { committed(): void; failed(): void }[] {
    const publishing: { committed(): void; failed(): void }[] = [];
    if (this.handOvers.size === 0 || !commit.outbox?.some((row) => row.category === "event")) return publishing;
    const published = [...(commit.published ?? [])];
    // Once an event stays a row, the commit's later events do too: the claim path keeps their order.
    let rows = false;
    commit.outbox = commit.outbox.filter((row) => {
      if (row.category !== "event") return true;
      if (!rows && row.notBefore <= commit.now) {
        for (const handOver of this.handOvers) {
          const taken = handOver.publish?.(row);
          if (!taken) continue;
          published.push(taken.entry);
          publishing.push(taken);
          return false;
        }
      }
      rows = true;
      return true;
    });
    if (published.length > 0) commit.published = published;
    return publishing;
  }

  /**
   * Due rows a local dispatcher will run go in already leased to it (durable timers, and rows no
   * local dispatcher serves, wait for a claim). Returns who leased which row.
   */
  private leaseRows(commit: Commit): Map<string, HandOver> {
    const leasedTo = new Map<string, HandOver>();
    if (this.handOvers.size === 0) return leasedTo;
    for (const row of commit.outbox ?? []) {
      if (row.notBefore > commit.now) continue;
      for (const handOver of this.handOvers) {
        row.lease = handOver.lease(row, commit.now);
        if (!row.lease) continue;
        leasedTo.set(row.id, handOver);
        break;
      }
    }
    return leasedTo;
  }

  /**
   * Give the rows this commit inserted leased to their dispatcher. A row whose id was already in
   * the outbox was not inserted (nor leased by us): whoever holds it runs it.
   */
  private handRowsOver(commit: Commit, result: CommitResult, leasedTo: Map<string, HandOver>): void {
    if (leasedTo.size === 0 || !result.inserted) return;
    const seqs = new Map(result.inserted.map((row) => [row.id, row.seq]));
    const taken = new Map<HandOver, OutboxRow[]>();
    for (const row of commit.outbox ?? []) {
      const seq = seqs.get(row.id);
      const handOver = leasedTo.get(row.id);
      if (seq === undefined || !handOver) continue;
      taken.set(handOver, [...(taken.get(handOver) ?? []), newOutboxRow(row, commit.now, seq)]);
    }
    for (const [handOver, rows] of taken) handOver.take(rows);
  }

  /**
   * The stored reply of a message this actor already handled, with the actor's current version.
   * Throws `MessageConflictError` when it was handled with a command that conflicts with this one (`print`).
   */
  private async priorReply(
    definition: AnyActor,
    address: string,
    messageId: string,
    outcome: RoutedOutcome | undefined,
    print: CommandPrint | undefined,
  ): Promise<SendResult | undefined> {
    const prior = await this.recordOf(address, messageId, outcome);
    if (!prior) return undefined;
    const held = readHeld(prior.reply);
    // An actor held without a read may have history that a later command must be decided on.
    if (this.active.get(address)?.unverified) this.active.delete(address);
    if (print !== undefined) requireSameCommand(address, messageId, held.print, print);
    this.counts.duplicates.on(actorMetrics(this.metrics, definition.type).duplicates);
    // A final outcome recorded in the inbox, for a row that is not done: its done row was pruned and
    // the key inserted again (see OutboxRetention). Finish the row, or it would run forever.
    const done = outcome && !prior.byRow ? finalOutcome(outcome) : undefined;
    if (done) await this.journal.commit({ outboxDone: [done], now: this.clock.now() });
    const activation = await this.activate(definition, address);
    return { reply: held.reply, version: activation.version, duplicate: true, events: [] };
  }

  /**
   * The record of a message this actor already handled: its inbox row, or for a final outcome the
   * done row it finished (`InboxEntry.outcomeOf`), which keeps no reply.
   */
  private async recordOf(address: string, messageId: string, outcome: RoutedOutcome | undefined) {
    const done = outcome && messageId === outcomeMessageId(outcome) ? finalOutcome(outcome) : undefined;
    if (done) return outcomeRecord(this.journal, address, done.id, messageId);
    const inbox = await this.journal.getInbox(address, messageId);
    return inbox && { reply: inbox.reply, byRow: false };
  }

  private async activate(definition: AnyActor, address: string): Promise<Activation> {
    const now = this.clock.now();
    const cached = this.active.get(address);
    if (cached) {
      this.active.delete(address);
      cached.lastUsed = now;
      this.active.set(address, cached);
      return cached;
    }
    const { id } = parseAddress(address);
    const recovered = await recover(this.journal, definition, address, id, this.logger, this.snapshotMetrics);
    this.counts.recoveries.on(actorMetrics(this.metrics, definition.type).recoveries);
    const activation: Activation = {
      state: recovered.state,
      version: recovered.version,
      lastUsed: now,
      unverified: false,
      bornEmpty: recovered.version === 0,
    };
    this.active.set(address, activation);
    this.passivate(now, address);
    if (recovered.version > 0 && definition.onRecovered) {
      const commands = definition.onRecovered(recovered.state, { address, id, version: recovered.version });
      for (const command of commands) {
        // Queued behind the current task in this actor's mailbox; awaiting here would deadlock.
        this.send(address, command).catch((error) =>
          this.logger.warn({ address, command: command.type, err: error }, "command from onRecovered failed"),
        );
      }
    }
    return activation;
  }

  /**
   * An actor the caller expects to be new (`SendOptions.expectNew`), held without reading it. If
   * the stream has events after all, the commit's expected version (0) conflicts, or a refusal
   * finds the stream's version is not 0; either drops this activation and reads the actor.
   */
  private activateNew(definition: AnyActor, address: string, id: string): Activation {
    const now = this.clock.now();
    const activation: Activation = {
      state: definition.initialState(id),
      version: 0,
      lastUsed: now,
      unverified: true,
      bornEmpty: true,
    };
    this.active.set(address, activation);
    this.passivate(now, address);
    return activation;
  }

  /** Bounded memory: drop idle actors past `idleMs`, and the least recently used beyond `maxActive`. */
  private passivate(now: number, keep: string): void {
    for (const [key, activation] of this.active) {
      const overCapacity = this.active.size > this.maxActive;
      const stale = now - activation.lastUsed > this.idleMs;
      if (!overCapacity && !stale) break; // recency order: the rest are newer
      if (key === keep || !this.mailboxes.idle(key)) continue;
      this.active.delete(key);
      this.counts.passivations.inc();
    }
  }
}

function yieldTurns(turns: number): Promise<void> {
  if (turns <= 0) return Promise.resolve();
  return new Promise((resolve) => setImmediate(() => resolve(yieldTurns(turns - 1))));
}

export function createRuntime(options: RuntimeOptions): Runtime {
  return new Runtime(options);
}
