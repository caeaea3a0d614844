import { Counter, type Registry } from "prom-client";
import { OWNERSHIP_DEFAULTS } from "../base/defaults.js";
import { CommandRejectedError, MessageConflictError, NotOwnerError, RetryableError } from "../base/errors.js";
import { parseAddress } from "../core/address.js";
import { type Clock, type IdGenerator, SLEEP_CANCELLED } from "../core/clock.js";
import { isRoutedOutcome, outcomeMessageId, type Typed } from "../core/decider.js";
import { resolveEnvironment } from "../core/environment.js";
import type { HandOver } from "../core/hand-over.js";
import { commandPrint, requireSameCommand } from "../core/held-command.js";
import type { Logger } from "../core/logger.js";
import type { SendOptions, SendResult } from "../core/runtime.js";
import { type Ownership, sliceOfAddress } from "../core/slices.js";
import { WarnThrottle } from "../core/warn-throttle.js";
import type { CommandSink } from "../effects/context.js";
import type { EventRecord, Journal, OutboxRow } from "../journal/types.js";
import { perRegistry } from "../observability/per-registry.js";
import type { PeerLink } from "./peer-link.js";
import type { PeerAnswer } from "./peer-protocol.js";

/** What the router needs of a runtime (a `Runtime` fits). */
export interface LocalRuntime {
  send(address: string, command: Typed, options?: SendOptions): Promise<SendResult>;
  handOver?(dispatcher: HandOver, active: boolean): void;
}

export interface CommandRouterOptions {
  runtime: LocalRuntime;
  journal: Journal;
  ownership: Ownership;
  clock?: Clock;
  /** Ids of forwards sent without a message id. */
  ids?: IdGenerator;
  /** How long a forwarder waits for the owner's reply before `ForwardTimeoutError` (default 30 s). */
  timeoutMs?: number;
  /** First and largest pause between two reads of a forwarded row (default 5 ms and 200 ms). */
  pollMs?: { initial: number; max: number };
  registry?: Registry;
  logger?: Logger;
  /**
   * Send a command straight to its owner's peer endpoint before the journal: one HTTP request on a
   * warm connection instead of an outbox row, the owner's claim and this worker's polls. Any
   * failure to get an answer (no endpoint known, refused, timed out, the slice moved) takes the
   * journal path with the same message id, so the command still runs once.
   */
  peers?: RouterPeers;
}

export interface RouterPeers {
  link: PeerLink;
  /** The endpoint of the worker owning `slice` now, as far as this worker knows (a `SliceLeaseManager` knows). */
  endpointOf(slice: number): string | undefined;
  /** How long to wait for a peer's answer before the journal path (default `OWNERSHIP_DEFAULTS.peerTimeoutMs`). */
  timeoutMs?: number;
}

/** What a routed command answers: the runtime's result, or a forward's (no version, no events). */
export interface RoutedResult {
  reply: unknown;
  /** The message id had been handled before and its stored reply was returned. */
  duplicate: boolean;
  /** Handled by the worker that owns the actor's slice, not this one. */
  forwarded: boolean;
  /** Stream version after handling; undefined for a forward. */
  version: number | undefined;
  /** Events appended; none reported for a forward. */
  events: readonly EventRecord[];
}

/**
 * The owner did not answer a forwarded command in time. Retryable: the forward row stays, and
 * sending again with the same message id waits for the same row (the command runs once).
 */
export class ForwardTimeoutError extends RetryableError {
  constructor(
    readonly address: string,
    readonly messageId: string,
    timeoutMs: number,
  ) {
    super(
      `no reply within ${timeoutMs} ms from the owner of "${address}" to forwarded message "${messageId}": ` +
        "it may still run; send again with the same messageId to wait for its reply",
    );
  }
}

const metricsFor = perRegistry((registry) => ({
  forwarded: new Counter({
    name: "oncely_commands_forwarded_total",
    help: "Commands for an actor of a slice this worker does not own, forwarded to its owner through the journal",
    labelNames: ["actor"],
    registers: [registry],
  }),
  sentToPeer: new Counter({
    name: "oncely_commands_sent_to_peer_total",
    help: "Commands for an actor of a slice this worker does not own, sent straight to its owner's peer endpoint and answered there",
    labelNames: ["actor"],
    registers: [registry],
  }),
  peerFallbacks: new Counter({
    name: "oncely_peer_fallbacks_total",
    help: "Commands that went through the journal because their owner's peer endpoint gave no answer (unreachable, timed out, not the owner, could not run it now)",
    labelNames: ["actor", "reason"],
    registers: [registry],
  }),
}));

/** The error the runtime throws for a command of a slice it does not own (by name: the ownership module defines it). */
const isNotOwner = (error: unknown): boolean => error instanceof Error && error.name === "NotOwnerError";

/** The forward row's id: one per (actor, message id), apart from every effect, message and event key. */
export const forwardRowId = (address: string, messageId: string): string => `oncely.forward:${address}:${messageId}`;

/**
 * Routes a command to the worker that owns its actor's slice: this runtime when this worker owns
 * it, otherwise a forward through the journal, a message outbox row addressed to the actor
 * (`forward: { messageId }` in its payload) that the owner's dispatcher claims and delivers as any
 * actor message, with the message id, so the actor's inbox dedups it. The dispatcher finishes the
 * row with the reply, which the forwarder reads (polling with backoff, woken early by the journal's
 * outbox signal) until `timeoutMs`. A `NotOwnerError` from the runtime (the slice moved between the
 * check and the command) is forwarded the same way.
 *
 * Failure windows: the forwarder dying after inserting the row changes nothing for the command,
 * which runs once, by the owner; a retry with the same message id finds the row and its reply. The
 * owner dying while running it leaves the row leased: after the lease the next owner of the slice
 * claims it and delivers it with the same message id (the inbox answers it if the first run
 * committed). Without a message id a fresh one is made, so a retry by the caller is a new command.
 *
 * @example
 * const router = new CommandRouter({ runtime, journal, ownership });
 * const { reply, forwarded } = await router.send("order/42", { type: "Cancel" }, { messageId: "req-7" });
 */
export class CommandRouter implements CommandSink {
  private readonly runtime: LocalRuntime;
  private readonly journal: Journal;
  readonly ownership: Ownership;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly timeoutMs: number;
  private readonly poll: { initial: number; max: number };
  private readonly metrics: ReturnType<typeof metricsFor>;
  private readonly peers: RouterPeers | undefined;
  private readonly peerTimeoutMs: number;
  private readonly logger: Logger;
  private readonly peerWarnings: WarnThrottle;

  constructor(options: CommandRouterOptions) {
    this.runtime = options.runtime;
    this.journal = options.journal;
    this.ownership = options.ownership;
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.ids = env.ids;
    this.timeoutMs = options.timeoutMs ?? OWNERSHIP_DEFAULTS.forwardTimeoutMs;
    this.poll = options.pollMs ?? { initial: 5, max: 200 };
    this.metrics = metricsFor(env.registry);
    this.peers = options.peers;
    this.peerTimeoutMs = options.peers?.timeoutMs ?? OWNERSHIP_DEFAULTS.peerTimeoutMs;
    this.logger = options.logger ?? env.logger;
    this.peerWarnings = new WarnThrottle(this.logger, this.clock, OWNERSHIP_DEFAULTS.peerWarnIntervalMs);
  }

  /** Whether this worker owns `address`'s slice now. */
  owns(address: string): boolean {
    return this.ownership.owns(sliceOfAddress(address, this.ownership.sliceCount));
  }

  async send(address: string, command: Typed, options: SendOptions = {}): Promise<RoutedResult> {
    if (this.owns(address)) {
      try {
        const result = await this.runtime.send(address, command, options);
        return { ...result, forwarded: false };
      } catch (error) {
        if (!isNotOwner(error)) throw error;
      }
    }
    // A dispatcher delivering a forward row for a slice it lost (between its claim and the send): a
    // forward would find that same row, leased to the dispatcher waiting on it, and wait out the
    // timeout. Refused instead, the dispatcher releases the row at once and the new owner claims it.
    const delivering = options.deliveringRow;
    if (delivering !== undefined && options.messageId !== undefined) {
      if (delivering === forwardRowId(address, options.messageId)) {
        throw new NotOwnerError(address, sliceOfAddress(address, this.ownership.sliceCount));
      }
    }
    return this.forward(address, command, options);
  }

  /** A dispatcher's registration reaches the runtime (see `CommandSink.handOver`). */
  handOver(dispatcher: HandOver, active: boolean): void {
    this.runtime.handOver?.(dispatcher, active);
  }

  private async forward(address: string, command: Typed, options: SendOptions): Promise<RoutedResult> {
    const { type } = parseAddress(address);
    // An effect's or a message's outcome keeps the id the actor dedups it by (as a local send would).
    const messageId = options.messageId ?? (isRoutedOutcome(command) ? outcomeMessageId(command) : this.ids.next());
    // A delivered forward row is the journal path already: its reply goes back through the row.
    if (this.peers && options.deliveringRow === undefined) {
      const direct = await this.sendToPeer(address, type, command, messageId, options.correlationId);
      if (direct) return direct;
    }
    return this.forwardThroughJournal(address, type, command, messageId, options);
  }

  /**
   * The command sent to the owner's peer endpoint: its result, or undefined when the journal path
   * must take it (counted and logged with why). A refusal by the owner's decision is thrown as a
   * journal forward's would be.
   *
   * Failure window: the owner committed, and its answer was lost or came after the timeout. The
   * journal forward that follows carries the same message id; the owner's inbox answers it as a
   * duplicate with the stored reply, so the command ran once and the caller gets its reply.
   */
  private async sendToPeer(
    address: string,
    type: string,
    command: Typed,
    messageId: string,
    correlationId: string | undefined,
  ): Promise<RoutedResult | undefined> {
    const peers = this.peers as RouterPeers;
    const endpoint = peers.endpointOf(sliceOfAddress(address, this.ownership.sliceCount));
    if (endpoint === undefined) return undefined;
    let answer: PeerAnswer;
    try {
      answer = await peers.link.send(
        endpoint,
        { address, command, messageId, ...(correlationId === undefined ? {} : { correlationId }) },
        this.peerTimeoutMs,
      );
    } catch (error) {
      this.fellBack(address, type, endpoint, "unreachable", error);
      return undefined;
    }
    switch (answer.kind) {
      case "handled":
        this.metrics.sentToPeer.inc({ actor: type });
        return { reply: answer.reply, duplicate: answer.duplicate, forwarded: true, version: undefined, events: [] };
      case "rejected":
        this.metrics.sentToPeer.inc({ actor: type });
        throw new CommandRejectedError(
          `forwarded command ${command.type} to ${address} failed: ${answer.name}: ${answer.message}`,
        );
      case "not-owner":
        this.fellBack(address, type, endpoint, "not_owner", undefined);
        return undefined;
      case "retryable":
        this.fellBack(address, type, endpoint, "retryable", `${answer.name}: ${answer.message}`);
        return undefined;
    }
  }

  private fellBack(address: string, type: string, endpoint: string, reason: string, error: unknown): void {
    this.metrics.peerFallbacks.inc({ actor: type, reason });
    const fields = { address, endpoint, reason, err: error };
    const message = "command sent through the journal: its owner's peer endpoint gave no answer";
    // A slice that just moved is routine (debug); a peer that cannot be reached or cannot run it is
    // not, warned once per interval and endpoint, with how many were left out since.
    if (reason === "not_owner") this.logger.debug(fields, message);
    else this.peerWarnings.warn(`${endpoint} ${reason}`, fields, message);
  }

  private async forwardThroughJournal(
    address: string,
    type: string,
    command: Typed,
    messageId: string,
    options: SendOptions,
  ): Promise<RoutedResult> {
    const id = forwardRowId(address, messageId);
    const payload = {
      to: address,
      command,
      forward: { messageId },
      correlationId: options.correlationId ?? null,
    };
    const now = this.clock.now();
    const committed = await this.journal.commit({
      outbox: [{ id, category: "message", kind: type, stream: address, payload, notBefore: now }],
      now,
    });
    this.metrics.forwarded.inc({ actor: type });
    const inserted = (committed.inserted ?? []).some((row) => row.id === id);
    const row = await this.awaitDone(address, messageId, id);
    if (!inserted) requireSameForward(row, address, messageId, command);
    if (row.outcome !== "delivered") {
      const error = (row.result as { error?: unknown } | null)?.error ?? row.lastError ?? row.status;
      throw new CommandRejectedError(`forwarded command ${command.type} to ${address} failed: ${String(error)}`);
    }
    return {
      reply: (row.result as { reply?: unknown } | null)?.reply ?? null,
      // A repeat either way: the forward row was there already, or the owner's inbox had the message id.
      duplicate: !inserted || (row.result as { duplicate?: unknown } | null)?.duplicate === true,
      forwarded: true,
      version: undefined,
      events: [],
    };
  }

  /** The row once finished (done or dead), read with backoff and on every outbox signal. */
  private async awaitDone(address: string, messageId: string, id: string): Promise<OutboxRow> {
    const deadline = this.clock.now() + this.timeoutMs;
    let pause = this.poll.initial;
    let wake: (() => void) | undefined;
    const unsubscribe = this.journal.onOutbox(() => wake?.());
    try {
      for (;;) {
        const row = await this.journal.getOutbox(id);
        if (row && (row.status === "done" || row.status === "dead")) return row;
        const left = deadline - this.clock.now();
        if (left <= 0) throw new ForwardTimeoutError(address, messageId, this.timeoutMs);
        const cancel = new AbortController();
        wake = () => cancel.abort(SLEEP_CANCELLED);
        await this.clock.sleep(Math.min(pause, left), cancel.signal).catch(() => {});
        wake = undefined;
        pause = Math.min(pause * 2, this.poll.max);
      }
    } finally {
      unsubscribe();
    }
  }
}

/** A forward row found already there must be this command's: else the message id was reused for another. */
function requireSameForward(row: OutboxRow, address: string, messageId: string, command: Typed): void {
  const held = (row.payload as { command?: unknown } | null)?.command;
  const next = commandPrint(command, messageId);
  if (held === null || typeof held !== "object" || typeof (held as Typed).type !== "string") {
    throw new MessageConflictError(
      `message id "${messageId}" was forwarded to ${address} with something that is not a command`,
      "payload",
      held,
    );
  }
  // The rules of the actor's own inbox (see held-command.ts), on the command's print: keys sorted at
  // every depth (PostgreSQL's jsonb reorders them), and a copy of the same type in another shape is
  // the same request (an event handed over at commit is forwarded unsigned, its durable copy signed).
  requireSameCommand(address, messageId, commandPrint(held as Typed, messageId), next);
}
