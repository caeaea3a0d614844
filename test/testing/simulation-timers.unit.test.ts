import { describe, expect, it } from "vitest";
import type { Random } from "../../src/core/clock.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { TIMER_KIND } from "../../src/effects/timer.js";
import { runSeeds } from "../../src/testing/simulation/run-seeds.js";
import type { SimCommand, SimulationSystem } from "../../src/testing/simulation/world.js";
import { type Parcel, parcelActor } from "../effects/fixtures/parcel-actor.js";

const SHIP_WITHIN_MS = 2_000;
const PARCELS = 6;
const parcel = parcelActor(SHIP_WITHIN_MS);

/**
 * Parcels with a shipment deadline, half of them shipped, under the simulator's crashes, commit
 * faults and clock ticks. Only the simulated clock can finish the parcels never shipped: each
 * must end overdue, by one fired timer, and no timer may be left unfired.
 */
const timersSystem: SimulationSystem = {
  name: "timers",
  actors: [parcel],
  providers: () => [],
  workers: (env) => [
    (() => {
      const dispatcher = new Dispatcher({
        journal: env.journal,
        runtime: env.runtime,
        owner: `g${env.generation}-d1`,
        clock: env.clock,
        random: env.random,
        faults: env.faults,
      });
      return { name: dispatcher.owner, runOnce: () => dispatcher.runOnce() };
    })(),
  ],
  workload: (_random: Random): SimCommand[] =>
    Array.from({ length: PARCELS }, (_, i) => [
      { address: `parcel/${i + 1}`, command: { type: "Start" }, messageId: `start-${i + 1}` },
      ...(i % 2 === 0 ? [{ address: `parcel/${i + 1}`, command: { type: "Ship" }, messageId: `ship-${i + 1}` }] : []),
    ]).flat(),
  isTerminal: (_address, state) => {
    const s = state as Parcel;
    return s.started && (s.shipped || s.overdue !== null);
  },
  invariants: [
    {
      name: "every-timer-fired-once",
      async check(world) {
        const problems: string[] = [];
        for (const row of await world.journal.listOutbox({ kind: TIMER_KIND })) {
          if (row.status !== "done" || row.outcome !== "fired") problems.push(`${row.id} is ${row.status}`);
        }
        for (let i = 1; i <= PARCELS; i++) {
          const events = await world.journal.readStream(`parcel/${i}`);
          const overdue = events.filter((e) => e.type === "Overdue").length;
          if (overdue > 1) problems.push(`parcel/${i} recorded Overdue ${overdue} times`);
        }
        return problems;
      },
    },
  ],
};

describe("durable timers in the simulator", () => {
  it("the simulated clock fires every timer once, through crashes and faults; parcels never shipped end overdue", async () => {
    const report = await runSeeds(timersSystem, { count: 8, steps: 80 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
    expect(report.seeds).toBe(8);
  });
});
