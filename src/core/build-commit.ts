import { mapped } from "../base/mapped.js";
import type { CheckpointWrite, Commit, NewOutboxRow } from "../journal/types.js";
import type { TraceCarrier } from "../observability/tracing.js";
import type { AnyActor } from "./actor.js";
import { parseAddress } from "./address.js";
import type { IdGenerator } from "./clock.js";
import { type Decision, finalOutcome, outcomeMessageId, type RoutedOutcome } from "./decider.js";
import { type CommandPrint, heldCommand } from "./held-command.js";
import { fenceCheckpoint } from "./slices.js";
import { currentVersion } from "./upcast.js";

/** What a decision is committed from: the actor as held, the command's identity, and what the runtime injects. */
export interface CommitInput {
  definition: AnyActor;
  address: string;
  /** The actor's state as decided on, at `version` (the commit's expected version). */
  state: unknown;
  version: number;
  /** The decision, its published events already stamped with their versions (see `published-versions.ts`). */
  decision: Decision;
  /** The command's dedup id (its own, or a routed outcome's); the commit records it in the inbox. */
  messageId: string | undefined;
  options: { causationId?: string | undefined; correlationId?: string | undefined };
  /** The command, when it is an outcome routed back to its owner (a final one finishes its outbox row). */
  outcome: RoutedOutcome | undefined;
  /** The command's print, kept with the reply (see `held-command.ts`); none for a routed outcome. */
  print: CommandPrint | undefined;
  now: number;
  /** Ids of the events to append. */
  ids: IdGenerator;
  /** The command's span, carried by every row so the steps and deliveries it causes join its trace. */
  trace: TraceCarrier | undefined;
  /** The slice's fencing token the worker decided under: the journal refuses the commit once it moved on. */
  fence: { slice: number; token: number } | undefined;
  /** Published-version counters the stamping advanced (checked and written with the commit). */
  counters: readonly CheckpointWrite[] | undefined;
}

/**
 * A decision as the one atomic commit it becomes: the events (evolved into the next state, for the
 * cache and a due snapshot), the outbox rows of its effects, messages and published events, the
 * inbox record of the command, the done mark of the outbox row a final outcome finishes, and the
 * fence and counter checkpoints. Pure: the runtime keeps the mailbox, the cache and the retries.
 */
export function buildCommit(input: CommitInput): { commit: Commit; nextState: unknown } {
  const { definition, address, decision, messageId, options, now, trace } = input;
  const events = decision.events ?? [];
  let nextState = input.state;
  for (const event of events) nextState = definition.evolve(nextState, event);
  const fromVersion = input.version;
  const nextVersion = input.version + events.length;
  const causationId = messageId ?? options.causationId;
  const correlationId = options.correlationId;
  const outbox: NewOutboxRow[] = [];
  for (const effect of decision.effects ?? []) {
    outbox.push({
      id: effect.key,
      category: "effect",
      kind: effect.kind,
      stream: address,
      payload: {
        input: effect.input,
        ...(effect.inputVersion === undefined ? {} : { inputVersion: effect.inputVersion }),
        correlationId: correlationId ?? null,
        ...(trace ? { trace } : {}),
      },
      notBefore: effect.notBefore ?? now,
    });
  }
  for (const message of decision.send ?? []) {
    outbox.push({
      id: message.id,
      category: "message",
      kind: parseAddress(message.to).type,
      stream: address,
      payload: {
        to: message.to,
        command: message.command,
        correlationId: correlationId ?? null,
        ...(message.expectNew === true ? { expectNew: true } : {}),
        ...(trace ? { trace } : {}),
      },
      notBefore: now,
    });
  }
  for (const event of decision.publish ?? []) {
    outbox.push({
      id: event.eventId,
      category: "event",
      kind: event.type,
      stream: address,
      payload: {
        eventId: event.eventId,
        type: event.type,
        source: event.source,
        aggregateId: event.aggregateId,
        ...(event.aggregateVersion === undefined ? {} : { aggregateVersion: event.aggregateVersion }),
        ...(event.schemaVersion === undefined ? {} : { schemaVersion: event.schemaVersion }),
        occurredAt: new Date(now).toISOString(),
        correlationId: correlationId ?? event.aggregateId,
        causationId: causationId ?? event.eventId,
        payload: event.payload,
        ...trace,
      },
      notBefore: now,
    });
  }
  const done = input.outcome ? finalOutcome(input.outcome) : undefined;
  const policy = definition.snapshot;
  const snapshotDue =
    policy !== undefined &&
    nextVersion > fromVersion &&
    Math.floor(nextVersion / policy.every) > Math.floor(fromVersion / policy.every);
  const commit: Commit = {
    stream: address,
    expectedVersion: fromVersion,
    events: mapped(events, (event) => ({
      eventId: input.ids.next(),
      type: event.type,
      data: event,
      causationId,
      correlationId,
      schemaVersion: currentVersion(`actor ${address}`, definition.events, event.type, definition.events !== undefined),
    })),
    outbox,
    outboxDone: done ? [done] : undefined,
    inbox:
      messageId === undefined
        ? undefined
        : {
            consumer: address,
            messageId,
            reply:
              input.print === undefined ? (decision.reply ?? null) : heldCommand(input.print, decision.reply ?? null),
            // The outcome's own row records it (its done transition), when nothing else must be kept.
            outcomeOf:
              done && input.outcome && messageId === outcomeMessageId(input.outcome) && decision.reply == null
                ? done.id
                : undefined,
          },
    snapshot:
      snapshotDue && policy
        ? { version: nextVersion, schemaVersion: policy.schemaVersion, state: nextState }
        : undefined,
    now,
  };
  const { fence, counters } = input;
  if (fence !== undefined) commit.checkpoints = [fenceCheckpoint(fence.slice, fence.token)];
  if (counters && counters.length > 0) commit.checkpoints = [...(commit.checkpoints ?? []), ...counters];
  return { commit, nextState };
}
