import Fastify from "fastify";
import { createHost, defineEffect, flow, succeeded } from "oncely";
import { consolePlugin } from "oncely/console";
import { memoryJournal, SimulatedClock, sequentialIds } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";

// A flow in the console like any actor: its effects on the effects page (by owner), its generated
// events, effects and published event on its timeline, its Unknown step in the reconciliation queue,
// and an operator's settlement there carrying the flow on to its next step.

const TOKEN = "unit-console-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };

// A card processor that never answers in time and offers no lookup: the charge ends in the queue.
const charge = defineEffect({
  kind: "charge",
  result: z.object({ chargeId: z.string().min(1) }),
  policy: { providerDedups: false },
  run: async (_input: { customer: string; amount: number }): Promise<never> => {
    throw new Error("timed out after the processor took the request");
  },
});
const receipt = defineEffect({
  kind: "receipt",
  run: async (input: { to: string; chargeId: string }) => succeeded({ mailId: `mail_${input.chargeId}` }),
});
const renewal = flow<{ type: "Renew"; customer: string; amount: number }>("renewal")
  .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
  .effect("receipt", receipt, ({ start, results }) => ({ to: start.customer, chargeId: results.charge.chargeId }))
  .publish("renewed", ({ results }) => ({ type: "SubscriptionRenewed", source: "billing", payload: results.charge }))
  .build();

describe("a flow in the console", () => {
  it("lists its effects and events, queues its Unknown step, and a settlement there carries it on", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const host = createHost({ journal, clock, actors: [renewal], handlers: [charge, receipt] });
    const app = Fastify({ logger: false });
    await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, clock, ids: sequentialIds("a") });
    const view = async (path: string) => {
      const answer = await app.inject({ method: "GET", url: `/console/api/view/${path}`, headers: auth });
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.body;
    };
    const dispatchUntil = async (key: string, status: string) => {
      for (let i = 0; i < 50 && (await journal.getOutbox(key))?.status !== status; i++) {
        await host.dispatcher.runOnce();
        clock.advance(60_000);
      }
      expect((await journal.getOutbox(key))?.status).toBe(status);
    };

    await host.actor(renewal).send("ada-12", { type: "Renew", customer: "ada", amount: 900 });
    await dispatchUntil("renewal:ada-12:charge", "reconcile");
    expect((await host.actor(renewal).state("ada-12")).state).toMatchObject({ waiting: "charge", unknown: "charge" });

    const effects = await view(`effects?owner=${encodeURIComponent("renewal/ada-12")}`);
    expect(effects).toContain('data-key="renewal:ada-12:charge"');
    expect(await view("reconciliation")).toContain('data-key="renewal:ada-12:charge"');
    let timeline = await view(`timeline?q=${encodeURIComponent("renewal/ada-12")}`);
    for (const type of ["FlowStarted", "StepRequested", "StepUnknown"]) expect(timeline).toContain(`<td>${type}</td>`);

    // Ada finds the charge in the processor's dashboard and settles it: the flow runs its next steps.
    const settled = await app.inject({
      method: "POST",
      url: "/console/api/reconciliation/settle",
      headers: auth,
      payload: { key: "renewal:ada-12:charge", outcome: "succeeded", result: '{"chargeId":"ch_9"}', by: "ada" },
    });
    expect(settled.statusCode, settled.body).toBe(200);
    await dispatchUntil("renewal:ada-12:charge", "done");
    await dispatchUntil("renewal:ada-12:receipt", "done");
    const { state } = await host.actor(renewal).state("ada-12");
    expect(state).toMatchObject({ status: "Completed", results: { receipt: { mailId: "mail_ch_9" } } });

    timeline = await view(`timeline?q=${encodeURIComponent("renewal/ada-12")}`);
    for (const type of ["StepCompleted", "FlowCompleted"]) expect(timeline).toContain(`<td>${type}</td>`);
    expect(timeline).toContain('data-key="renewal:ada-12:receipt"');
    expect(timeline).toContain("<td>renewal:ada-12:renewed</td>"); // the published integration event
    // A search by the flow's id alone finds it too, as it finds an order's actors.
    expect(await view("timeline?q=ada-12")).toContain('data-stream="renewal/ada-12"');

    await app.close();
    await host.stop();
  });
});
