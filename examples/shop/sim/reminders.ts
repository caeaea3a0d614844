import type { CommandSink, EffectOutcome, OutboxRow, Runtime } from "oncely";
import { defineActor, succeeded } from "oncely";
import type { Invariant, SimCommand, SimEnv } from "oncely/testing";
import { SimulatedProvider } from "oncely/testing";

/**
 * A sim-only actor that asks for the same effect again: every `Remind` requests the reminder mail
 * under one key and one input, the same request, which a commit must not insert twice (a no-op).
 * The shop's own actors never request a key they hold, so without this the simulator never
 * commits a row that is not inserted, and a runtime that handed such a row to the started
 * dispatcher anyway (a finished effect called again) would go unseen.
 */
export const REMINDER_MAIL = "reminder-mail";

/** A dispatcher as the runtime registers it for hand-overs. */
type HandOver = Parameters<Runtime["handOver"]>[0];

type ReminderCommand = { type: "Remind"; to: string } | EffectOutcome;
type ReminderEvent =
  | { type: "ReminderAsked" }
  | { type: "ReminderSent"; messageId: string }
  | { type: "ReminderFailed"; reason: string };
export interface ReminderState {
  asked: number;
  settled: "sent" | "failed" | null;
}

export const reminderActor = defineActor<ReminderState, ReminderCommand, ReminderEvent>({
  type: "reminder",
  // Snapshotted at the interval the seed draws: its evolve counts asks (applying one twice shows).
  snapshot: { every: 50, schemaVersion: 1 },
  initialState: () => ({ asked: 0, settled: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case "ReminderAsked":
        return { ...state, asked: state.asked + 1 };
      case "ReminderSent":
        return { ...state, settled: "sent" };
      case "ReminderFailed":
        return { ...state, settled: "failed" };
    }
  },
  decide: (command, state, { id }) => {
    switch (command.type) {
      case "Remind":
        return {
          events: [{ type: "ReminderAsked" }],
          effects: [{ kind: REMINDER_MAIL, key: `reminder:${id}:mail`, input: { to: command.to } }],
        };
      case "oncely.effect.succeeded":
        if (state.settled) return {};
        return { events: [{ type: "ReminderSent", messageId: (command.result as { messageId: string }).messageId }] };
      case "oncely.effect.failed":
        // Only an operator's settlement fails it (the provider had no record of the key).
        if (state.settled) return {};
        return { events: [{ type: "ReminderFailed", reason: command.error }] };
      default:
        return {};
    }
  },
});

export const reminderProvider = (dedups: boolean) =>
  new SimulatedProvider<{ to: string }, { messageId: string }>({
    kind: REMINDER_MAIL,
    dedups,
    lookup: true,
    execute: (_input, _key, n) => succeeded({ messageId: `rem_${n}` }),
    policy: { timeoutMs: 2_000, leaseMs: 10_000, rerunAfterNotFoundMs: 120_000, lookupAttempts: 4 },
  });

/** Two reminders, each asked three times (three message ids): the second and third find the key held. */
export const reminderWorkload = (): SimCommand[] =>
  ["r1", "r2"].flatMap((id) =>
    [1, 2, 3].map((n) => ({
      address: `reminder/${id}`,
      command: { type: "Remind", to: `${id}@example.com` },
      messageId: `remind:${id}:${n}`,
    })),
  );

export const reminderTerminal = (state: unknown): boolean => (state as ReminderState).settled !== null;

const PROBLEMS = "hand-over-problems";

/**
 * The runtime as the started dispatcher sees it, with its hand-overs checked: a row handed over
 * must be the one its commit just inserted leased to this dispatcher (stored with that lease, not
 * done). Read at the hand-over itself, before the dispatcher runs it: the memory journal answers
 * from the state at the call.
 */
export function handOverChecked(env: SimEnv): CommandSink {
  const problems = (env.outside.get(PROBLEMS) as string[] | undefined) ?? [];
  env.outside.set(PROBLEMS, problems);
  const check = (rows: OutboxRow[]) => {
    for (const row of rows) {
      void env.journal.getOutbox(row.id).then(
        (stored) => {
          if (stored && stored.status !== "done" && stored.leaseOwner === row.leaseOwner) return;
          problems.push(
            `row ${row.id} handed over under lease ${row.leaseOwner}, but the journal holds it ${
              stored ? `${stored.status}, leased to ${stored.leaseOwner}` : "nowhere"
            }: its commit did not insert it`,
          );
        },
        () => {}, // a dead process's read: nothing to check
      );
    }
  };
  return new Proxy(env.runtime, {
    get(target, property, receiver) {
      if (property !== "handOver") return Reflect.get(target, property, receiver);
      return (dispatcher: HandOver, active: boolean) => {
        const checked: HandOver = {
          lease: (row, now) => dispatcher.lease(row, now),
          take: (rows) => {
            check(rows);
            dispatcher.take(rows);
          },
        };
        // One wrapper per dispatcher, so that unregistering finds it.
        const wrappers = (handOverWrappers.get(target) ?? new Map<HandOver, HandOver>()).set(
          dispatcher,
          handOverWrappers.get(target)?.get(dispatcher) ?? checked,
        );
        handOverWrappers.set(target, wrappers);
        target.handOver(wrappers.get(dispatcher) as HandOver, active);
      };
    },
  });
}

const handOverWrappers = new WeakMap<object, Map<HandOver, HandOver>>();

/** Every hand-over was of a row its commit inserted (see `handOverChecked`). */
export const handOversInserted: Invariant = {
  name: "hand-overs-inserted",
  async check(world) {
    return [...((world.outside.get(PROBLEMS) as string[] | undefined) ?? [])];
  },
};
