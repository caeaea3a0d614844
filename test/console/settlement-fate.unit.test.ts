import { Command } from "commander";
import Fastify from "fastify";
import { createHost, defineActor, defineEffect, type EffectStatus, type OutcomeOf } from "oncely";
import { consolePlugin } from "oncely/console";
import { memoryJournal, SimulatedClock, sequentialIds } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { registerReconcileCommands } from "../../src/cli/reconcile.js";

// A settlement's fate on the Operator actions page, from the console and from the CLI alike: a
// result the effect's schema refuses is shown refused with the reason, never as "succeeded".

const TOKEN = "unit-console-token-0123456789";
const KEY = "payer:1:payment";

// A provider that never answers in time and offers no lookup: every charge ends in the queue.
const payment = defineEffect({
  kind: "payment",
  result: z.object({ paymentId: z.string().min(1) }),
  policy: { providerDedups: false },
  run: async (_input: { amount: number }): Promise<never> => {
    throw new Error("timed out after the provider took the request");
  },
});

const payer = defineActor<{ payment: EffectStatus }, { type: "Pay" }, { type: string }, typeof payment>({
  type: "payer",
  effects: [payment],
  initialState: () => ({ payment: "NotRequested" }),
  evolve: (_state, event) => ({ payment: event.type === "Paid" ? "Completed" : "Pending" }),
  decide: (command: { type: "Pay" } | OutcomeOf<typeof payment>, state, { id }) => {
    switch (command.type) {
      case "Pay":
        return state.payment === "NotRequested"
          ? { events: [{ type: "Requested" }], effects: [payment.request(`payer:${id}:payment`, { amount: 5 })] }
          : {};
      case "oncely.effect.succeeded":
        return { events: [{ type: "Paid" }] };
      default:
        return { events: [{ type: command.type }] };
    }
  },
});

describe("a settlement on the Operator actions page", () => {
  it("shows what became of it: waiting, refused with the reason, recorded; the CLI's alongside the console's", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const host = createHost({ journal, clock, actors: [payer], handlers: [payment] });
    const app = Fastify({ logger: false });
    await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, clock, ids: sequentialIds("a") });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const audit = async () => {
      const body = (await app.inject({ method: "GET", url: "/console/api/view/audit", headers: auth })).body;
      return [...body.matchAll(/<tr data-action[^>]*>(.*?)<\/tr>/g)].map((m) =>
        (m[1] ?? "").replace(/<td[^>]*>/g, "").replace(/<\/td>/g, " | "),
      );
    };
    const dispatchUntil = async (status: string) => {
      for (let i = 0; i < 50 && (await journal.getOutbox(KEY))?.status !== status; i++) {
        await host.dispatcher.runOnce();
        clock.advance(60_000);
      }
      expect((await journal.getOutbox(KEY))?.status).toBe(status);
    };

    await host.send("payer/1", { type: "Pay" });
    await dispatchUntil("reconcile");

    // Ada settles in the console with a result the effect's schema refuses (no paymentId).
    const settled = await app.inject({
      method: "POST",
      url: "/console/api/reconciliation/settle",
      headers: auth,
      payload: { key: KEY, outcome: "succeeded", result: '{"id": "p1"}', by: "ada" },
    });
    expect(settled.statusCode, settled.body).toBe(200);
    expect((await audit())[0]).toMatch(/ada \| settle \| payer:1:payment \| succeeded: waiting for a dispatcher/);

    await dispatchUntil("reconcile");
    const [refused] = await audit();
    expect(refused).toMatch(/ada \| settle \| payer:1:payment \| succeeded: refused: .*paymentId/);
    expect(refused).not.toMatch(/recorded/);

    // Bob settles it again from the CLI, with the provider's paymentId.
    clock.advance(1000);
    const program = new Command().exitOverride();
    registerReconcileCommands(program, async () => journal, { out: () => {} }, { clock, ids: sequentialIds("c") });
    await program.parseAsync([
      "node",
      "oncely",
      "reconcile",
      "settle",
      KEY,
      "--succeeded",
      "--result",
      '{"paymentId":"p1"}',
      "--by",
      "bob",
      "--note",
      "in the ledger",
    ]);
    let rows = await audit();
    expect(rows[0]).toMatch(
      /bob \| settle \| payer:1:payment \| succeeded: waiting for a dispatcher .*\| cli \| in the ledger/,
    );
    expect(rows[1]).toMatch(/ada \| settle \| .*succeeded: refused: .*paymentId.* \| console/);

    await dispatchUntil("done");
    expect((await host.state<{ payment: EffectStatus }>("payer/1")).state.payment).toBe("Completed");
    rows = await audit();
    expect(rows[0]).toMatch(/bob \| settle \| payer:1:payment \| succeeded: recorded by the owner/);
    expect(rows[1]).toMatch(/ada \| settle \| .*succeeded: refused: .*paymentId/);

    await app.close();
    await host.stop();
  });
});
