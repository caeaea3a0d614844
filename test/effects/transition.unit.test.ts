import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EffectOutcome } from "../../src/core/decider.js";
import { backoffDelay } from "../../src/effects/backoff.js";
import { resolvePolicy } from "../../src/effects/policy.js";
import { compactState, effectRowState } from "../../src/effects/row-state.js";
import { effectTransition } from "../../src/effects/transition.js";
import type { EffectEvent, EffectUpdate, RunAnswer, Transition } from "../../src/effects/transition-types.js";
import type { DefiniteResult, EffectPolicy } from "../../src/effects/types.js";
import type { OutboxRow } from "../../src/journal/types.js";

/**
 * effectTransition alone, without a journal, a runtime or a dispatcher: a small driver plays the
 * interpreter's part (the row as a journal would store it, a provider that keeps one outcome per
 * key, an owner that accepts, refuses or cannot be reached, crashes anywhere) from a sequence of
 * choices fast-check generates, and checks the protocol's promises at every event.
 */

const newRow = (): OutboxRow => ({
  id: "order:1:payment",
  seq: 1,
  category: "effect",
  kind: "payment",
  stream: "order/1",
  payload: { input: { amount: 5 } },
  status: "pending",
  attempts: 0,
  notBefore: 0,
  leaseOwner: "d1",
  leaseUntil: 60_000,
  lastError: null,
  outcome: null,
  result: null,
  createdAt: 0,
  updatedAt: 0,
});

/** Reads the next choice (as fast-check generated them); the driver stops once they run out. */
class Choices {
  private i = 0;
  constructor(private readonly picks: readonly number[]) {}
  get spent(): boolean {
    return this.i >= this.picks.length;
  }
  pick(n: number): number {
    return (this.picks[this.i++] ?? 0) % n;
  }
}

interface World {
  /** The row as stored: only writes change it (and the owner's commit of a final outcome: done). */
  row: OutboxRow;
  now: number;
  /** The provider: its outcome for the key once it acted (or refused), and how often it acted. */
  outcome: DefiniteResult | undefined;
  acts: number;
  /** A run was recorded whose outcome was never learned, and nothing since proved it never acted. */
  mayHaveActed: boolean;
  /** The owner accepted an Unknown; a lookup that found nothing since then (the only way back to a run). */
  unknownTold: boolean;
  notFoundSinceUnknown: boolean;
  /** Final outcomes the owner was told (accepted, refused or not reached). */
  finals: EffectOutcome[];
  runs: number;
  trace: string[];
}

function write(world: World, update: EffectUpdate, now: number): void {
  const before = world.row;
  const notBefore =
    update.notBefore === undefined
      ? before.notBefore
      : typeof update.notBefore === "number"
        ? update.notBefore
        : now + backoffDelay(update.notBefore.backoff, update.notBefore.n, { next: () => 0.5 });
  world.row = {
    ...before,
    status: update.status ?? before.status,
    attempts: update.attempts ?? before.attempts,
    lastError: update.lastError ?? before.lastError,
    result: update.result === undefined ? before.result : compactState(update.result),
    notBefore,
  };
  // Attempts count runs: they never go down, whatever the write.
  expect(world.row.attempts).toBeGreaterThanOrEqual(before.attempts);
  world.trace.push(`write ${world.row.status} attempts=${world.row.attempts} ${JSON.stringify(world.row.result)}`);
}

/** The provider's answer to a run: it acts (once per key if it dedups) or not, and says so or not. */
function provide(world: World, policy: EffectPolicy, choices: Choices): RunAnswer {
  const act = (): DefiniteResult => {
    if (world.outcome && policy.providerDedups) return world.outcome; // the stored outcome, no second act
    world.acts++;
    world.outcome ??= choices.pick(4) === 0 ? { outcome: "failed", reason: "card declined" } : succeeded;
    return world.outcome;
  };
  switch (choices.pick(5)) {
    case 0:
    case 1:
      return { kind: "definite", answer: act() };
    case 2:
      act();
      return { kind: "ambiguous", reason: "timeout after the provider acted" };
    case 3:
      return { kind: "ambiguous", reason: "connection refused before anything was sent" };
    default:
      return { kind: "not-performed", answer: { outcome: "not-performed", reason: "429" } };
  }
}
const succeeded: DefiniteResult = { outcome: "succeeded", result: { paymentId: "p-1" } };

/** One claim of the row, then events until the step ends (a write, the owner's commit, or a crash). */
function step(world: World, policy: EffectPolicy, choices: Choices, canLookUp: boolean): void {
  let held = world.row;
  const claimed: EffectEvent = {
    type: "claimed",
    dispatcher: "d1",
    handler: { lookup: canLookUp },
    input: { ok: true },
  };
  let next: Transition = effectTransition(held, policy, claimed, world.now);
  let last: EffectEvent = claimed;
  for (let guard = 0; guard < 10; guard++) {
    const known = effectRowState(world.row).pending;
    if (next.call) {
      // A known outcome is final: nothing asks the provider again.
      expect(known, "a call after a known outcome").toBeUndefined();
    }
    if (choices.pick(8) === 0) {
      world.trace.push("crash");
      return;
    }
    if (next.command) {
      const { command } = next.command;
      world.trace.push(`tell ${command.type}`);
      held = { ...held, result: compactState(next.command.state) };
      if (command.type === "oncely.effect.succeeded" || command.type === "oncely.effect.failed") {
        world.finals.push(command);
        checkFinal(world, command);
      }
      if (command.type === "oncely.effect.unknown") expect(known, "Unknown after a known outcome").toBeUndefined();
      const final = command.type === "oncely.effect.succeeded" || command.type === "oncely.effect.failed";
      const answer = choices.pick(10);
      if (answer === 0) last = { type: "owner-rejected", error: "refused" };
      else if (answer === 1 && final) last = { type: "owner-unreachable", error: "journal down" };
      else if (answer === 1) {
        world.trace.push("owner unreachable: the step fails");
        return;
      } else {
        last = { type: "owner-accepted", command: next.command };
        if (command.type === "oncely.effect.unknown") {
          world.unknownTold = true;
          world.notFoundSinceUnknown = false;
        }
        if (final) {
          // The owner's commit marks the row done in the same transaction.
          world.row = { ...world.row, status: "done", result: null };
          expect(effectTransition(held, policy, last, world.now)).toEqual({});
          return;
        }
      }
      next = effectTransition(held, policy, last, world.now);
      continue;
    }
    if (next.call === "run") {
      const start = effectTransition(held, policy, { type: "run-starting", recorded: false }, world.now);
      if (!policy.providerDedups) {
        expect(world.mayHaveActed, "a second run of a non-dedup key after an ambiguous one").toBe(false);
      }
      if (world.unknownTold) expect(world.notFoundSinceUnknown, "a run after Unknown without a lookup").toBe(true);
      expect(start.update?.attempts).toBe(held.attempts + 1);
      write(world, start.update ?? {}, world.now);
      held = world.row;
      world.runs++;
      world.mayHaveActed = true;
      expect(world.row.attempts).toBe(world.runs);
      const answer = provide(world, policy, choices);
      world.trace.push(`run answered ${answer.kind}`);
      if (choices.pick(8) === 0) {
        world.trace.push("crash after the provider");
        return;
      }
      world.now += 1_000;
      last = { type: "run-answered", answer, canLookUp, jitter: answer.kind === "not-performed" ? 0.5 : undefined };
      next = effectTransition(held, policy, last, world.now);
      continue;
    }
    if (next.call === "lookup") {
      const found = world.outcome && world.acts > 0 ? world.outcome : undefined;
      const pick = choices.pick(3);
      last = {
        type: "lookup-answered",
        answer:
          pick === 0
            ? { kind: "unclear", problem: "lookup failed: 503" }
            : found
              ? { kind: "definite", answer: found }
              : { kind: "not-found" },
      };
      world.trace.push(`lookup answered ${last.answer.kind}`);
      world.now += choices.pick(2) * 60_000;
      next = effectTransition(held, policy, last, world.now);
      continue;
    }
    if (next.update) {
      write(world, next.update, world.now);
      const proved = next.update.result?.rerunAllowed === true;
      // What may clear an ambiguous run: the provider said it did nothing, or a lookup found nothing.
      if (proved && last.type === "run-answered" && last.answer.kind === "not-performed") world.mayHaveActed = false;
      if (proved && last.type === "lookup-answered" && last.answer.kind === "not-found") {
        world.mayHaveActed = false;
        world.notFoundSinceUnknown = true;
      }
      if (world.unknownTold && world.row.status === "pending") {
        // Unknown leaves only through a lookup: a proven rerun, or a known outcome kept for delivery.
        const state = effectRowState(world.row);
        expect(state.rerunAllowed === true || state.pending !== undefined, "Unknown back to a blind run").toBe(true);
      }
    }
    return;
  }
  throw new Error(`a step that never ends: ${world.trace.join("; ")}`);
}

/** Every final outcome told agrees with the provider, and with every other one told. */
function checkFinal(world: World, command: EffectOutcome): void {
  const first = world.finals[0];
  expect(command.type, world.trace.join("; ")).toBe(first?.type);
  if (command.type === "oncely.effect.succeeded" && first?.type === "oncely.effect.succeeded") {
    expect(command.result).toEqual(first.result);
  }
  if (command.type === "oncely.effect.succeeded" || command.type === "oncely.effect.failed") {
    if (command.via !== "operator") expect(command.type.endsWith(world.outcome?.outcome ?? "?")).toBe(true);
    // A run's outcome after Unknown only once a lookup proved the run safe.
    if (world.unknownTold && command.via === "run") expect(world.notFoundSinceUnknown).toBe(true);
  }
}

const policyArb = fc.record({
  providerDedups: fc.boolean(),
  maxAttempts: fc.integer({ min: 1, max: 4 }),
  lookupAttempts: fc.integer({ min: 0, max: 3 }),
  rerunAfterNotFoundMs: fc.constantFrom(null, 0, 30_000),
  notPerformedMaxAttempts: fc.integer({ min: 1, max: 4 }),
  notPerformedMaxAgeMs: fc.constantFrom(null, 5_000),
});

describe("effectTransition: Pending → Unknown → lookup → reconciliation, without a journal", () => {
  it("property: one act per key without dedup, final is final, attempts count runs, Unknown leaves only by lookup", () => {
    fc.assert(
      fc.property(
        policyArb,
        fc.boolean(),
        fc.array(fc.nat(), { minLength: 20, maxLength: 400 }),
        (p, canLookUp, picks) => {
          const policy = resolvePolicy(p);
          const choices = new Choices(picks);
          const world: World = {
            row: newRow(),
            now: 1_000,
            outcome: undefined,
            acts: 0,
            mayHaveActed: false,
            unknownTold: false,
            notFoundSinceUnknown: false,
            finals: [],
            runs: 0,
            trace: [],
          };
          while (!choices.spent && (world.row.status === "pending" || world.row.status === "resolving")) {
            step(world, policy, choices, canLookUp);
            world.now += 10_000;
          }
          if (!policy.providerDedups) expect(world.acts, world.trace.join("; ")).toBeLessThanOrEqual(1);
          // Nothing is dropped: a row is done, still being worked on, waiting for an operator, or dead with why.
          expect(["done", "pending", "resolving", "reconcile", "dead"]).toContain(world.row.status);
          if (world.row.status === "dead") expect(world.row.lastError).toMatch(/owner rejected/);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("an ambiguous run of a key whose provider does not dedup goes Unknown, then only a lookup moves it", () => {
    const policy = resolvePolicy({ providerDedups: false, lookupAttempts: 2 });
    const row = { ...newRow(), attempts: 1, result: { lastRunAt: 1_000 } };
    const answered = effectTransition(
      row,
      policy,
      { type: "run-answered", answer: { kind: "ambiguous", reason: "timeout" }, canLookUp: true },
      2_000,
    );
    expect(answered.command?.command).toMatchObject({ type: "oncely.effect.unknown", attempt: 1, error: "timeout" });
    expect(answered.call).toBeUndefined();
    const told = answered.command;
    if (!told) throw new Error("no command");
    const accepted = effectTransition(row, policy, { type: "owner-accepted", command: told }, 3_000);
    expect(accepted.update).toMatchObject({ status: "resolving", result: { unknownSince: 3_000, lookups: 0 } });
    // Claimed again while it still says `attempts = 1` and nothing allows a rerun: Unknown, never a run.
    const claimed = effectTransition(
      { ...row, lastError: "timeout" },
      policy,
      { type: "claimed", dispatcher: "d1", handler: { lookup: true }, input: { ok: true } },
      4_000,
    );
    expect(claimed.call).toBeUndefined();
    expect(claimed.command?.command.type).toBe("oncely.effect.unknown");
  });

  it("a lookup that finds nothing escalates once its budget is spent; the reason names the lookup", () => {
    const policy = resolvePolicy({ lookupAttempts: 2 });
    const resolving: OutboxRow = { ...newRow(), status: "resolving", attempts: 1, result: { lookups: 1 } };
    const next = effectTransition(resolving, policy, { type: "lookup-answered", answer: { kind: "not-found" } }, 9_000);
    expect(next.command).toMatchObject({
      command: {
        type: "oncely.effect.needs-reconciliation",
        error: 'lookup found no record of "order:1:payment" at the provider',
      },
      escalation: "lookups-exhausted",
      state: { lookups: 2 },
    });
  });
});
