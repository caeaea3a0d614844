import { describe, expect, it, vi } from "vitest";
import { defineActor } from "../../src/core/actor.js";
import { seededRandom, sequentialIds } from "../../src/core/clock.js";
import type { EffectOutcome } from "../../src/core/decider.js";
import { Runtime } from "../../src/core/runtime.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { type EffectHandler, succeeded } from "../../src/effects/types.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { SimulatedClock } from "../../src/testing/clock.js";

/**
 * A commit hands over only the rows it inserted. A decision that requests an effect key already
 * in the outbox (the same request again: a no-op) inserts nothing, so nothing is handed to the
 * started dispatcher, and a finished effect is never called again.
 */
type NoteCommand = { type: "Send" } | EffectOutcome;
const noteActor = defineActor<{ sends: number; sent: boolean }, NoteCommand, { type: "Asked" } | { type: "Sent" }>({
  type: "note",
  initialState: () => ({ sends: 0, sent: false }),
  evolve: (state, event) => (event.type === "Asked" ? { ...state, sends: state.sends + 1 } : { ...state, sent: true }),
  decide: (command, state, { id }) => {
    if (command.type === "Send") {
      // Every Send asks for the same effect under the same key and input: the same request.
      return { events: [{ type: "Asked" }], effects: [{ kind: "mail", key: `note:${id}:mail`, input: { id } }] };
    }
    if (command.type === "oncely.effect.succeeded") return { events: state.sent ? [] : [{ type: "Sent" }] };
    return {};
  },
});

describe("effects handed over at commit: a row the commit did not insert", () => {
  for (const dedups of [true, false]) {
    it(`is not handed over again: a finished effect is called once (provider dedups: ${dedups})`, async () => {
      const journal = new MemoryJournal();
      const clock = new SimulatedClock();
      const runtime = new Runtime({ journal, actors: [noteActor], clock, ids: sequentialIds("ev") });
      const calls: string[] = [];
      const mail: EffectHandler<{ id: string }, { ok: true }> = {
        kind: "mail",
        policy: { providerDedups: dedups },
        run: async (_input, { idempotencyKey }) => {
          calls.push(idempotencyKey);
          return succeeded({ ok: true });
        },
      };
      const dispatcher = new Dispatcher({
        journal,
        runtime,
        handlers: [mail],
        owner: "d1",
        clock,
        random: seededRandom(1),
        pollIntervalMs: 1e9,
      });
      dispatcher.start();
      try {
        await runtime.send("note/n1", { type: "Send" }, { messageId: "send-1" });
        await vi.waitFor(async () => expect((await runtime.state<{ sent: boolean }>("note/n1")).state.sent).toBe(true));
        expect(await journal.getOutbox("note:n1:mail")).toMatchObject({ status: "done" });
        // Asked again (another message id): the key is held, nothing is inserted, nothing handed over.
        await runtime.send("note/n1", { type: "Send" }, { messageId: "send-2" });
        expect((await runtime.state<{ sends: number }>("note/n1")).state.sends).toBe(2);
        // Let anything handed over run (no clock moves: a claim would find nothing due).
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      } finally {
        await dispatcher.stop();
      }
      expect(calls).toEqual(["note:n1:mail"]);
      expect(dispatcher.stats.handedOver).toBe(1);
    });
  }
});
