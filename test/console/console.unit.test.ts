import fc from "fast-check";
import Fastify, { type FastifyInstance } from "fastify";
import { GAP_ALERTS, type Journal } from "oncely";
import { consolePlugin, html, OPERATOR_ACTIONS } from "oncely/console";
import { memoryJournal, SimulatedClock, sequentialIds } from "oncely/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// The console over a memory journal through fastify's inject: the token on every view and action,
// every hostile value escaped on every page, bad input answered 4xx naming the field, and each
// operator action recorded with who took it.

const TOKEN = "unit-console-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
const EVIL = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`;

let journal: Journal;
let clock: SimulatedClock;
let app: FastifyInstance;

async function seed(): Promise<void> {
  const now = clock.now();
  await journal.commit({
    stream: `payment/${EVIL}`,
    expectedVersion: 0,
    events: [{ eventId: "e1", type: EVIL, data: { evil: EVIL }, causationId: EVIL }],
    outbox: [
      {
        id: "k-reconcile",
        category: "effect",
        kind: EVIL,
        stream: `payment/${EVIL}`,
        payload: { input: { note: EVIL } },
        notBefore: now,
      },
      {
        id: `pub-${EVIL}`,
        category: "event",
        kind: EVIL,
        stream: `payment/${EVIL}`,
        payload: { evil: EVIL },
        notBefore: now,
      },
    ],
    park: [{ consumer: EVIL, source: EVIL, version: 3, message: { evil: EVIL } }],
    deadLetters: [
      {
        id: "dl-1",
        consumer: EVIL,
        messageId: EVIL,
        payload: { subject: EVIL, body: EVIL, envelope: { evil: EVIL }, reason: "failed" },
        error: EVIL,
        stack: EVIL,
        attempts: 3,
        firstFailedAt: now,
        lastFailedAt: now,
      },
    ],
    documents: [
      {
        collection: GAP_ALERTS,
        id: "gap-1",
        doc: {
          consumer: EVIL,
          source: EVIL,
          fromVersion: 1,
          toVersion: 2,
          parkedVersions: [3],
          openedAt: now,
          alertedAt: now,
          status: "open",
          resolvedAt: null,
          note: EVIL,
        },
      },
    ],
    now,
  });
  await journal.forceOutbox(
    "k-reconcile",
    { status: "reconcile", attempts: 1, lastError: EVIL, result: { unknownSince: now, lookups: 8 } },
    now,
  );
}

beforeEach(async () => {
  journal = memoryJournal();
  clock = new SimulatedClock();
  await seed();
  app = Fastify({ logger: false });
  await app.register(consolePlugin, {
    prefix: "/console",
    journal,
    token: TOKEN,
    clock,
    ids: sequentialIds("act"),
  });
});
afterEach(async () => {
  await app.close();
});

const view = (path: string, headers: Record<string, string> = auth) =>
  app.inject({ method: "GET", url: `/console/api/view/${path}`, headers });
const post = (path: string, payload: unknown, headers: Record<string, string> = auth) =>
  app.inject({ method: "POST", url: `/console/api/${path}`, headers, payload: payload as object });

describe("the console's token", () => {
  it("serves the data-free shell without it, and no view or action without it or with a wrong one", async () => {
    const shell = await app.inject({ method: "GET", url: "/console/effects" });
    expect(shell.statusCode).toBe(200);
    expect(shell.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(shell.body).not.toContain("k-reconcile");
    for (const headers of [{}, { authorization: "Bearer wrong-token-of-some-length" }, { cookie: `token=${TOKEN}` }]) {
      expect((await view("reconciliation", headers)).statusCode).toBe(401);
      const settle = await post(
        "reconciliation/settle",
        { key: "k-reconcile", outcome: "failed", reason: "x", by: "eve" },
        headers,
      );
      expect(settle.statusCode).toBe(401);
      expect((await post("dead-letters/dl-1/discard", { by: "eve" }, headers)).statusCode).toBe(401);
    }
    expect((await journal.getDeadLetter("dl-1"))?.status).toBe("open");
    expect((await journal.getOutbox("k-reconcile"))?.status).toBe("reconcile");
  });

  it("refuses a token that could be guessed", async () => {
    const other = Fastify({ logger: false });
    await expect(other.register(consolePlugin, { journal, token: "short" })).rejects.toThrow("16-256");
    await other.close();
  });
});

describe("hostile values", () => {
  it("are escaped on every page: the markup they carry never reaches the browser as markup", async () => {
    const pages = [
      "effects",
      "reconciliation",
      "dead-letters",
      `dead-letters/dl-1`,
      "parked",
      `timeline?q=${encodeURIComponent(`payment/${EVIL}`)}`,
      "audit",
    ];
    await post("dead-letters/dl-1/discard", { by: EVIL, note: EVIL }).then((r) => expect(r.statusCode).toBe(200));
    for (const page of pages) {
      const answer = await view(page === "dead-letters" ? "dead-letters?status=discarded" : page);
      expect(answer.statusCode, page).toBe(200);
      expect(answer.body, page).not.toContain("<script>");
      expect(answer.body, page).not.toContain("<img");
      expect(answer.body, page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img");
    }
  });

  it("html`` escapes any string so that it reads back as the same text and adds no markup", () => {
    const markup = fc.string({ unit: fc.constantFrom("<", ">", "&", '"', "'", "a", "/", "=", " ", "\u00e9") });
    fc.assert(
      fc.property(fc.oneof(markup, fc.string({ unit: "binary" })), (value) => {
        const inner = html`<td>${value}</td>`.text.slice("<td>".length, -"</td>".length);
        expect(inner).not.toMatch(/[<>"']/);
        const decoded = inner.replace(/&(lt|gt|quot|#39|amp);/g, (_m, e: string) =>
          e === "lt" ? "<" : e === "gt" ? ">" : e === "quot" ? '"' : e === "#39" ? "'" : "&",
        );
        expect(decoded).toBe(value);
      }),
    );
  });
});

describe("bad input", () => {
  it("gets a 4xx naming the field, never a 500", async () => {
    const cases: [() => Promise<{ statusCode: number; body: string }>, number, string][] = [
      [() => view("effects?status=Bogus"), 400, "status"],
      [() => view("effects?sort=age"), 400, "sort"],
      [() => view("dead-letters?status=gone"), 400, "status"],
      [() => view("nope"), 404, "page"],
      [() => view("dead-letters/missing"), 404, "missing"],
      [() => post("reconciliation/settle", { key: "k-reconcile", outcome: "maybe", by: "ada" }), 400, "outcome"],
      [() => post("reconciliation/settle", { key: "k-reconcile", outcome: "failed", reason: "x" }), 400, "by"],
      [() => post("reconciliation/settle", { key: "k-reconcile", outcome: "failed", by: "ada" }), 400, "reason"],
      [
        () => post("reconciliation/settle", { key: "k-reconcile", outcome: "succeeded", result: "{", by: "ada" }),
        400,
        "result",
      ],
      [() => post("reconciliation/settle", { key: "k-reconcile", outcome: "succeeded", by: "ada" }), 400, "result"],
      [() => post("reconciliation/settle", { key: "nope", outcome: "failed", reason: "x", by: "ada" }), 404, "nope"],
      [
        () => post("reconciliation/settle", { key: "k-reconcile", outcome: "failed", reason: "x", by: "a", extra: 1 }),
        400,
        "extra",
      ],
      [
        () =>
          app.inject({
            method: "POST",
            url: "/console/api/reconciliation/settle",
            headers: { ...auth, "content-type": "application/json" },
            payload: '{"key": ',
          }),
        400,
        "body",
      ],
      [() => post("dead-letters/dl-1/replay", {}), 400, "by"],
      [() => post("dead-letters/missing/discard", { by: "ada" }), 404, "missing"],
      // No consumers were given: replay says what is missing instead of failing.
      [() => post("dead-letters/dl-1/replay", { by: "ada" }), 409, "consumer"],
    ];
    for (const [call, status, mention] of cases) {
      const answer = await call();
      expect(answer.statusCode, answer.body).toBe(status);
      expect(answer.body).toContain(mention);
    }
  });
});

describe("operator actions", () => {
  it("settle through Reconciliation.settle and discard through DeadLetters, each recorded with who took it", async () => {
    const settled = await post("reconciliation/settle", {
      key: "k-reconcile",
      outcome: "succeeded",
      result: '{"id": "pay_1"}',
      by: "ada",
      note: "in the provider's ledger",
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const row = await journal.getOutbox("k-reconcile");
    expect(row?.status).toBe("pending");
    expect(row?.result).toMatchObject({
      pending: {
        outcome: "succeeded",
        result: { id: "pay_1" },
        via: "operator",
        by: "ada",
        note: "in the provider's ledger",
      },
    });
    const again = await post("reconciliation/settle", {
      key: "k-reconcile",
      outcome: "failed",
      reason: "x",
      by: "bob",
    });
    expect(again.statusCode).toBe(409);

    clock.advance(1000);
    expect((await post("dead-letters/dl-1/discard", { by: "bob" })).statusCode).toBe(200);
    expect((await journal.getDeadLetter("dl-1"))?.status).toBe("discarded");
    expect((await post("dead-letters/dl-1/discard", { by: "bob" })).statusCode).toBe(400);

    const actions = (await journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc);
    expect(actions).toEqual([
      expect.objectContaining({ by: "ada", action: "settle", target: "k-reconcile", outcome: "succeeded" }),
      expect.objectContaining({ by: "bob", action: "discard", target: "dl-1", outcome: "discarded" }),
    ]);
    const audit = await view("audit");
    expect(audit.body.indexOf("bob")).toBeLessThan(audit.body.indexOf("ada"));
  });

  it("lists Unknown effects first, oldest first, with their attempts and lookups", async () => {
    clock.advance(5000);
    await journal.commit({
      outbox: [{ id: "k-pending", category: "effect", kind: "email", stream: "order/1", payload: {}, notBefore: 0 }],
      now: clock.now(),
    });
    const body = (await view("effects")).body;
    expect(body.indexOf('data-key="k-reconcile"')).toBeGreaterThan(-1);
    expect(body.indexOf('data-key="k-reconcile"')).toBeLessThan(body.indexOf('data-key="k-pending"'));
    expect(body).toMatch(/data-key="k-reconcile"[\s\S]*?<td>1<\/td><td>8<\/td>/);
    expect((await view("reconciliation")).body).toMatch(/Attempts<\/dt><dd>1<\/dd>\s*<dt>Lookups<\/dt><dd>8<\/dd>/);
  });
});
