import { effectRowState } from "../../effects/row-state.js";
import { effectListStatus } from "../../journal/console-queries.js";
import type { DeadLetterRecord, EventRecord, OutboxRow, ParkedRecord } from "../../journal/types.js";
import type { OperatorAction } from "../audit.js";

/**
 * What the journal says about a few actors, joined into one story for the timeline drawing: the
 * actors are lanes, and every link between them comes from ids the journal already keeps. An
 * event's `causationId` is the id of the message it handled: an outbox row id of a message or an
 * integration event (an arrow from the lane that wrote the row), or `<key>#outcome`,
 * `<key>#unknown:<attempt>`, `<key>#reconcile` for an effect's outcomes (the runtime's routed
 * outcome ids, `outcomeMessageId`), which mark the effect's bar. Pure: rows in, story out.
 */

export interface ActorRecords {
  stream: string;
  events: readonly EventRecord[];
  effects: readonly OutboxRow[];
  messages: readonly OutboxRow[];
  published: readonly OutboxRow[];
}

export interface StoryInput {
  actors: readonly ActorRecords[];
  /** Operator actions (settle actions of the effects are kept). */
  actions: readonly OperatorAction[];
  /** Dead letters that may concern the story (those of none of its messages are left out). */
  deadLetters: readonly DeadLetterRecord[];
  /** Parked messages that may concern the story (likewise). */
  parked: readonly ParkedRecord[];
  now: number;
}

export interface StoryEvent {
  id: string;
  lane: number;
  at: number;
  type: string;
  version: number;
  causedBy: string | null;
}

export interface StorySettlement {
  at: number;
  by: string;
  outcome: string;
  note: string | null;
}

export interface StoryEffect {
  key: string;
  lane: number;
  kind: string;
  /** As the effects list shows it: Pending, Unknown, Completed, Failed. */
  status: string;
  requestedAt: number;
  /** When the owner recorded its outcome; null while open. */
  endedAt: number | null;
  attempts: number;
  /** Lookups while Unknown, from the row; null once done (the row then keeps only the outcome). */
  lookups: number | null;
  /** When it went Unknown (first), if it did. */
  unknownAt: number | null;
  /** When it went to the reconciliation queue, if it did. */
  reconcileAt: number | null;
  /** Attempts whose outcome was Unknown, by when the owner heard so. */
  unknownAttempts: { attempt: number; at: number }[];
  settlements: StorySettlement[];
  outcome: string | null;
  lastError: string | null;
}

export interface StorySend {
  id: string;
  category: "message" | "event";
  /** Target actor type (message) or event type. */
  kind: string;
  from: number;
  sentAt: number;
  /** Lanes that handled it, each at its first event caused by it (or, for a message, its ack). */
  arrivals: { lane: number; at: number }[];
  status: string;
  /** Where a message went (an actor address), or the event's subject source. */
  to: string | null;
}

export interface StoryParked {
  lane: number;
  at: number;
  consumer: string;
  source: string;
  version: number;
}

export interface StoryDeadLetter {
  id: string;
  lane: number;
  at: number;
  consumer: string;
  error: string;
  status: string;
}

export interface Story {
  lanes: string[];
  events: StoryEvent[];
  effects: StoryEffect[];
  sends: StorySend[];
  parked: StoryParked[];
  deadLetters: StoryDeadLetter[];
  now: number;
}

const OUTCOME = "#outcome";
const UNKNOWN = "#unknown:";
const RECONCILE = "#reconcile";

export function buildStory(input: StoryInput): Story {
  const lanes = input.actors.map((a) => a.stream);
  const laneOf = new Map(lanes.map((s, i) => [s, i]));
  const events: StoryEvent[] = [];
  /** causationId -> lane -> earliest time an event of that lane was caused by it. */
  const caused = new Map<string, Map<number, number>>();
  input.actors.forEach((actor, lane) => {
    for (const e of actor.events) {
      events.push({ id: e.eventId, lane, at: e.recordedAt, type: e.type, version: e.version, causedBy: e.causationId });
      if (e.causationId === null) continue;
      const byLane = caused.get(e.causationId) ?? new Map<number, number>();
      byLane.set(lane, Math.min(byLane.get(lane) ?? e.recordedAt, e.recordedAt));
      caused.set(e.causationId, byLane);
    }
  });

  const settlements = new Map<string, StorySettlement[]>();
  for (const a of input.actions) {
    if (a.action !== "settle") continue;
    const list = settlements.get(a.target) ?? [];
    list.push({ at: a.at, by: a.by, outcome: a.outcome, note: a.note });
    settlements.set(a.target, list);
  }

  const effects: StoryEffect[] = [];
  const sends: StorySend[] = [];
  /** Outbox row id -> the lane that wrote it (for dead letters and parked messages). */
  const writer = new Map<string, number>();
  /** `source/aggregateId` of published events -> the lane that published them. */
  const sourceLane = new Map<string, number>();
  input.actors.forEach((actor, lane) => {
    for (const row of actor.effects) effects.push(effectOf(row, lane, actor.events, settlements.get(row.id) ?? []));
    for (const row of [...actor.messages, ...actor.published]) {
      writer.set(row.id, lane);
      const category = row.category === "message" ? "message" : "event";
      const arrivals = [...(caused.get(row.id) ?? new Map<number, number>())].map(([to, at]) => ({ lane: to, at }));
      const payload = (row.payload ?? {}) as { to?: unknown; source?: unknown; aggregateId?: unknown };
      const to = category === "message" && typeof payload.to === "string" ? payload.to : null;
      const target = to === null ? undefined : laneOf.get(to);
      // A delivered message whose command recorded no event still arrived: at its ack.
      if (target !== undefined && arrivals.length === 0 && row.status === "done" && row.outcome === "delivered")
        arrivals.push({ lane: target, at: row.updatedAt });
      if (category === "event" && typeof payload.source === "string" && typeof payload.aggregateId === "string")
        sourceLane.set(`${payload.source}/${payload.aggregateId}`, lane);
      sends.push({
        id: row.id,
        category,
        kind: row.kind,
        from: lane,
        sentAt: row.createdAt,
        arrivals: arrivals.sort((a, b) => a.lane - b.lane),
        status: row.outcome ?? row.status,
        to: to ?? (typeof payload.source === "string" ? payload.source : null),
      });
    }
  });

  // A message's lane: the lane that wrote it, else the first lane that handled it.
  const laneOfMessage = (id: string | null): number | undefined => {
    if (id === null) return undefined;
    const w = writer.get(id);
    if (w !== undefined) return w;
    const handled = caused.get(id);
    return handled ? Math.min(...handled.keys()) : undefined;
  };

  const deadLetters: StoryDeadLetter[] = [];
  for (const d of input.deadLetters) {
    const lane = laneOfMessage(d.messageId);
    if (lane === undefined) continue;
    deadLetters.push({ id: d.id, lane, at: d.lastFailedAt, consumer: d.consumer, error: d.error, status: d.status });
  }
  const parked: StoryParked[] = [];
  for (const p of input.parked) {
    const eventId = (p.message as { eventId?: unknown } | null)?.eventId;
    const lane = laneOfMessage(typeof eventId === "string" ? eventId : null) ?? sourceLane.get(p.source);
    if (lane === undefined) continue;
    parked.push({ lane, at: p.parkedAt, consumer: p.consumer, source: p.source, version: p.version });
  }
  return { lanes, events, effects, sends, parked, deadLetters, now: input.now };
}

function effectOf(
  row: OutboxRow,
  lane: number,
  events: readonly EventRecord[],
  settlements: StorySettlement[],
): StoryEffect {
  const state = effectRowState(row);
  let endedAt: number | null = null;
  let reconcileAt: number | null = null;
  const unknownAttempts: { attempt: number; at: number }[] = [];
  for (const e of events) {
    const c = e.causationId;
    if (c === null || !c.startsWith(row.id)) continue;
    const tail = c.slice(row.id.length);
    if (tail === OUTCOME) endedAt = endedAt === null ? e.recordedAt : Math.min(endedAt, e.recordedAt);
    else if (tail === RECONCILE)
      reconcileAt = reconcileAt === null ? e.recordedAt : Math.min(reconcileAt, e.recordedAt);
    else if (tail.startsWith(UNKNOWN)) {
      const attempt = Number(tail.slice(UNKNOWN.length));
      if (!unknownAttempts.some((u) => u.attempt === attempt))
        unknownAttempts.push({ attempt: Number.isFinite(attempt) ? attempt : 0, at: e.recordedAt });
    }
  }
  // Done without an outcome event (the owner recorded none, or its events are past the page): the row's last write.
  if (endedAt === null && row.status === "done") endedAt = row.updatedAt;
  unknownAttempts.sort((a, b) => a.at - b.at);
  const unknownAt = unknownAttempts[0]?.at ?? state.unknownSince ?? null;
  return {
    key: row.id,
    lane,
    kind: row.kind,
    status: effectListStatus(row),
    requestedAt: row.createdAt,
    endedAt,
    attempts: row.attempts,
    lookups: row.status === "done" ? null : (state.lookups ?? 0),
    unknownAt,
    reconcileAt,
    unknownAttempts,
    settlements: [...settlements].sort((a, b) => a.at - b.at),
    outcome: row.outcome,
    lastError: row.lastError,
  };
}
