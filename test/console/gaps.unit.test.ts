import Fastify, { type FastifyInstance } from "fastify";
import { GAP_ALERTS } from "oncely";
import { consolePlugin, listActions } from "oncely/console";
import { sequentialIds } from "oncely/testing";
import { afterEach, describe, expect, it } from "vitest";
import { viewWithGap } from "../messaging/support/gap-world.js";
import { orderEvent } from "../messaging/support/orders.js";

// The console's parked page offers a skip form per open gap and a supply form per consumer; both
// act on the journal (token required), are recorded with the operator, and the running
// consumer's next gap check finishes the work. A refused action answers 4xx with the reason.

const TOKEN = "unit-console-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
});

/** A sequenced consumer with versions 2..3 of orders/o1 missing (4 and 5 parked, alerted on), and the console over its journal. */
async function setUp() {
  const { journal, clock, consumer, versions } = await viewWithGap();
  app = Fastify({ logger: false });
  await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, clock, ids: sequentialIds("a") });
  const server = app;
  return {
    journal,
    consumer,
    versions,
    view: () => server.inject({ method: "GET", url: "/console/api/view/parked", headers: auth }),
    post: (path: string, payload: object, headers: Record<string, string> = auth) =>
      server.inject({ method: "POST", url: `/console/api/gaps/${path}`, headers, payload }),
  };
}

describe("the console's gap tools", () => {
  it("shows a skip form for the open gap; skipping records the operator and the consumer releases the rest", async () => {
    const c = await setUp();
    const page = (await c.view()).body;
    expect(page).toContain("1 gap alert(s) unresolved");
    expect(page).toMatch(/<tr data-source="orders\/o1"><td>orders\/o1<\/td><td>1<\/td><td>2..3<\/td>/);
    expect(page).toContain('<form class="skip-gap" data-post="/console/api/gaps/skip"');
    expect(page).toContain('<input type="hidden" name="source" value="orders/o1">');
    expect(page).toContain('<form class="supply-gap" data-post="/console/api/gaps/supply"');
    expect(page).toContain('<textarea name="envelope"');

    const refusedNoToken = await c.post("skip", { consumer: "view", source: "orders/o1", by: "ada" }, {});
    expect(refusedNoToken.statusCode).toBe(401);
    const noOperator = await c.post("skip", { consumer: "view", source: "orders/o1" });
    expect(noOperator.statusCode).toBe(400);
    expect(noOperator.json().issues).toEqual([expect.stringMatching(/^by: /)]);

    const skipped = await c.post("skip", { consumer: "view", source: "orders/o1", by: "ada", note: "lost upstream" });
    expect(skipped.statusCode).toBe(200);
    expect(skipped.json().message).toContain("skipped 2..3 of orders/o1 for view by ada");
    expect((await c.journal.listDocuments(GAP_ALERTS))[0]?.doc).toMatchObject({
      status: "skipped",
      note: "versions 2..3 skipped by ada: lost upstream",
    });
    expect(await listActions(c.journal)).toEqual([
      expect.objectContaining({ by: "ada", action: "skip-gap", target: "view|orders/o1", via: "console" }),
    ]);
    expect((await c.view()).body).toContain("0 gap alert(s) unresolved");
    await c.consumer.checkGaps();
    expect(await c.versions()).toEqual([1, 4, 5]);

    const again = await c.post("skip", { consumer: "view", source: "orders/o1", by: "ada" });
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toMatch(/^no gap: consumer "view" has nothing parked for source "orders\/o1"/);
    expect(await listActions(c.journal)).toHaveLength(1);
  });

  it("supplies a missing event from its JSON envelope; refusals answer 400 naming what is wrong", async () => {
    const c = await setUp();
    for (const v of [2, 3]) {
      const answer = await c.post("supply", {
        consumer: "view",
        envelope: JSON.stringify(orderEvent("o1", v)),
        by: "bob",
        note: "fetched from the producer",
      });
      expect(answer.statusCode).toBe(200);
    }
    await c.consumer.checkGaps();
    expect(await c.versions()).toEqual([1, 2, 3, 4, 5]);
    expect((await listActions(c.journal)).map((a) => [a.action, a.target, a.outcome, a.by, a.via])).toEqual([
      ["supply-gap", "view|orders/o1@3", "parked o1:ShippingReady", "bob", "console"],
      ["supply-gap", "view|orders/o1@2", "parked o1:PaymentProcessed", "bob", "console"],
    ]);

    const cases: [object, RegExp][] = [
      [{ consumer: "view", envelope: "{", by: "bob" }, /envelope: not valid JSON/],
      [{ consumer: "view", envelope: '{"eventId":"x"}', by: "bob" }, /not an integration event envelope/],
      [{ consumer: "view", envelope: JSON.stringify(orderEvent("o1", 2)), by: "bob" }, /no gap: consumer "view"/],
      [{ consumer: "view", by: "bob" }, /envelope: /],
    ];
    for (const [payload, reason] of cases) {
      const answer = await c.post("supply", payload);
      expect(answer.statusCode, JSON.stringify(payload)).toBe(400);
      const { error, issues } = answer.json() as { error: string; issues?: string[] };
      expect([error, ...(issues ?? [])].join("; ")).toMatch(reason);
    }
    expect(await listActions(c.journal)).toHaveLength(2);
  });
});
