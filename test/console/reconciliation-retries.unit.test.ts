import Fastify, { type FastifyInstance } from "fastify";
import { type EffectHandler, RetryableError } from "oncely";
import { consolePlugin, OPERATOR_ACTIONS } from "oncely/console";
import { memoryJournal, sequentialIds } from "oncely/testing";
import { afterEach, describe, expect, it } from "vitest";
import { paymentActor, paymentKey } from "../effects/fixtures/payment-actor.js";
import { World } from "../effects/fixtures/world.js";

// The console's reconciliation page shows an effect whose retries were exhausted (escalated by a
// real dispatcher), says why it waits, and retries it through Reconciliation.retry.

const TOKEN = "unit-console-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
});

async function setUp() {
  const journal = memoryJournal();
  let failures = 2;
  const payment: EffectHandler<{ amount: number }, { id: string }> = {
    kind: "payment",
    policy: { notPerformedMaxAttempts: 2, backoff: { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 0 } },
    async run() {
      if (failures-- > 0) throw new RetryableError("429 rate limited");
      return { outcome: "succeeded", result: { id: "pay_1" } };
    },
  };
  const w = new World(journal, [paymentActor], [payment]);
  await w.node.runtime.send("order/c1", { type: "RequestPayment", amount: 7 });
  await w.drain();
  app = Fastify({ logger: false });
  await app.register(consolePlugin, {
    prefix: "/console",
    journal,
    token: TOKEN,
    clock: w.clock,
    ids: sequentialIds("a"),
  });
  const server = app;
  return {
    w,
    view: () => server.inject({ method: "GET", url: "/console/api/view/reconciliation", headers: auth }),
    retry: (payload: object) =>
      server.inject({ method: "POST", url: "/console/api/reconciliation/retry", headers: auth, payload }),
  };
}

describe("the console and an effect whose retries were exhausted", () => {
  it("shows why it waits with its last error, and retries it with the same key", async () => {
    const { w, view, retry } = await setUp();
    const page = (await view()).body;
    expect(page).toContain(`data-key="${paymentKey("c1")}"`);
    expect(page).toMatch(
      /Why here<\/dt><dd class="cause" data-cause="retries-exhausted">retries exhausted: the provider never acted/,
    );
    expect(page).toContain("retries exhausted after 2 attempts: not performed: RetryableError: 429 rate limited");
    expect(page).toContain('data-post="/console/api/reconciliation/retry"');

    expect((await retry({ key: paymentKey("c1") })).statusCode).toBe(400);
    const answer = await retry({ key: paymentKey("c1"), by: "ada", note: "limit raised" });
    expect(answer.statusCode, answer.body).toBe(200);
    expect((await retry({ key: paymentKey("c1"), by: "ada" })).statusCode).toBe(409);
    expect((await w.journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc)).toEqual([
      expect.objectContaining({ by: "ada", action: "retry", target: paymentKey("c1"), outcome: "retrying" }),
    ]);
    await w.drain();
    expect((await w.journal.getOutbox(paymentKey("c1")))?.status).toBe("done");
    expect((await view()).body).toContain("0 effect(s) wait for an operator");
  });
});
