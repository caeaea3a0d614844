import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type PaymentProvider, type PaymentProviderOptions, startPaymentProvider } from "./payment/server.js";
import { readLedgerFile } from "./shared/ledger.js";
import { get, post } from "./test-http.js";

const started: PaymentProvider[] = [];
async function start(options: PaymentProviderOptions = {}) {
  const provider = await startPaymentProvider(options);
  started.push(provider);
  return provider;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.close()));
});

const charge = { orderId: "42", amount: 2800, currency: "EUR" };

describe("payment provider", () => {
  it("charges once per Idempotency-Key and answers the same paymentId again", async () => {
    const provider = await start();
    const first = await post(provider.url, "/payments", charge, { key: "order:42:payment" });
    const second = await post(provider.url, "/payments", charge, { key: "order:42:payment" });
    expect(first).toEqual({ status: 201, body: { paymentId: expect.any(String), status: "succeeded" } });
    expect(second).toEqual(first);
    expect(provider.ledger.charges).toHaveLength(1);
    expect(provider.ledger.charges[0]).toMatchObject({ ...charge, idempotencyKey: "order:42:payment" });
  });

  it("answers 409 for the same key with a different body, and charges nothing more", async () => {
    const provider = await start();
    await post(provider.url, "/payments", charge, { key: "k" });
    const reused = await post(provider.url, "/payments", { ...charge, amount: 1 }, { key: "k" });
    expect(reused.status).toBe(409);
    expect(provider.ledger.charges).toHaveLength(1);
  });

  it("declines by rule with 402, records the decline, never charges, and replays the decline for the key", async () => {
    const provider = await start({ declineAmountsEndingWith: "13" });
    const declined = await post(provider.url, "/payments", { ...charge, amount: 1013 }, { key: "d" });
    expect(declined).toEqual({ status: 402, body: { status: "declined", reason: expect.stringContaining("13") } });
    expect(await post(provider.url, "/payments", { ...charge, amount: 1013 }, { key: "d" })).toEqual(declined);
    expect(provider.ledger.charges).toHaveLength(0);
    expect(provider.ledger.declines).toHaveLength(1);
    expect((await get(provider.url, "/payments?idempotencyKey=d")).body).toMatchObject({ status: "declined" });
  });

  it("declines every new payment at declineRate 1", async () => {
    const provider = await start({ faults: { declineRate: 1 } });
    expect((await post(provider.url, "/payments", charge, { key: "a" })).status).toBe(402);
    expect(provider.ledger.charges).toHaveLength(0);
  });

  it("looks a payment up by key: 200 with the charge, 404 for an unknown key, 400 without a key", async () => {
    const provider = await start();
    const { body } = await post(provider.url, "/payments", charge, { key: "order:1:payment" });
    expect(await get(provider.url, `/payments?idempotencyKey=${encodeURIComponent("order:1:payment")}`)).toEqual({
      status: 200,
      body: { paymentId: body.paymentId, status: "succeeded", ...charge },
    });
    expect((await get(provider.url, "/payments?idempotencyKey=nope")).status).toBe(404);
    const missing = await get(provider.url, "/payments");
    expect(missing.status).toBe(400);
    expect(missing.body.error).toContain("idempotencyKey");
  });

  it.each([
    ["a missing Idempotency-Key", charge, undefined, "Idempotency-Key"],
    ["a negative amount", { ...charge, amount: -5 }, "k", "amount"],
    ["an amount that is not an integer", { ...charge, amount: 10.5 }, "k", "amount"],
    ["a bad currency", { ...charge, currency: "euro" }, "k", "currency"],
    ["a missing orderId", { amount: 5, currency: "EUR" }, "k", "orderId"],
  ])("answers 400 naming the field for %s", async (_name, body, key, field) => {
    const provider = await start();
    const answer = await post(provider.url, "/payments", body, key === undefined ? {} : { key });
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(answer.body.error).toContain(field);
    expect(provider.ledger.charges).toHaveLength(0);
  });

  it("answers 400 naming the body for malformed JSON", async () => {
    const provider = await start();
    const response = await fetch(`${provider.url}/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "k" },
      body: "{not json",
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain("body");
    expect(provider.ledger.charges).toHaveLength(0);
  });

  it("failRate: answers 5xx and does nothing", async () => {
    const provider = await start({ faults: { failRate: 1 } });
    expect((await post(provider.url, "/payments", charge, { key: "k" })).status).toBe(503);
    expect(provider.ledger.charges).toHaveLength(0);
    expect((await get(provider.url, "/payments?idempotencyKey=k")).status).toBe(404);
  });

  it("dropAfterRate: charges, then resets the connection; the client sees a socket error and the ledger the charge", async () => {
    const provider = await start({ faults: { dropAfterRate: 1 } });
    await expect(post(provider.url, "/payments", charge, { key: "k" })).rejects.toThrow(TypeError);
    expect(provider.ledger.charges).toHaveLength(1);
    expect((await get(provider.url, "/payments?idempotencyKey=k")).body).toMatchObject({ status: "succeeded" });
  });

  it("slowRate: charges, but answers only after the client gave up", async () => {
    const provider = await start({ faults: { slowRate: 1, slowMs: 60_000 } });
    const controller = new AbortController();
    const call = post(provider.url, "/payments", charge, { key: "k", signal: controller.signal });
    // Wait until the charge exists, then give up as a client timeout would.
    await expect.poll(() => provider.ledger.charges.length).toBe(1);
    controller.abort(new Error("client timeout"));
    await expect(call).rejects.toThrow("client timeout");
    expect((await get(provider.url, "/payments?idempotencyKey=k")).body).toMatchObject({ status: "succeeded" });
  });

  it("noIdempotency: the same key charges again every time, and lookup finds the latest charge", async () => {
    const provider = await start({ faults: { noIdempotency: true } });
    const first = await post(provider.url, "/payments", charge, { key: "k" });
    const second = await post(provider.url, "/payments", charge, { key: "k" });
    expect(second.body.paymentId).not.toBe(first.body.paymentId);
    expect(provider.ledger.charges).toHaveLength(2);
    expect((await get(provider.url, "/payments?idempotencyKey=k")).body.paymentId).toBe(second.body.paymentId);
  });

  it("lookupDown: lookups answer 503 while charges still go through, and answer again once it is lifted", async () => {
    const provider = await start({ faults: { lookupDown: true } });
    expect((await post(provider.url, "/payments", charge, { key: "k" })).status).toBe(201);
    expect((await get(provider.url, "/payments?idempotencyKey=k")).status).toBe(503);
    provider.setFaults({ lookupDown: false });
    expect((await get(provider.url, "/payments?idempotencyKey=k")).body).toMatchObject({ status: "succeeded" });
  });

  it("changes faults at run time through POST /faults, and rejects bad ones naming the field", async () => {
    const provider = await start();
    expect((await post(provider.url, "/faults", { failRate: 1 })).body).toMatchObject({ failRate: 1, slowRate: 0 });
    expect((await post(provider.url, "/payments", charge, { key: "k" })).status).toBe(503);
    const bad = await post(provider.url, "/faults", { declineRate: 2 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("declineRate");
    const unknown = await post(provider.url, "/faults", { failrate: 0 });
    expect(unknown.status).toBe(400);
    expect(provider.faults().failRate).toBe(1);
    provider.setFaults({ failRate: 0 });
    expect((await post(provider.url, "/payments", charge, { key: "k" })).status).toBe(201);
  });

  it("draws faults from its seed: the same seed gives the same faults, another seed others", async () => {
    const run = async (seed: number) => {
      const provider = await start({ seed, faults: { failRate: 0.5, declineRate: 0.3 } });
      const statuses: number[] = [];
      for (let i = 0; i < 24; i++) {
        statuses.push((await post(provider.url, "/payments", { ...charge, orderId: `${i}` }, { key: `k${i}` })).status);
      }
      return statuses;
    };
    const a = await run(7);
    expect(await run(7)).toEqual(a);
    expect(new Set(a)).toEqual(new Set([201, 402, 503]));
    expect(await run(8)).not.toEqual(a);
  });

  it("persists its ledger to JSON lines: a restarted provider still knows the key, an audit can read the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oncely-payment-"));
    try {
      const ledgerPath = join(dir, "payment.jsonl");
      const first = await start({ ledgerPath });
      const charged = await post(first.url, "/payments", charge, { key: "k" });
      await first.close();
      const restarted = await start({ ledgerPath });
      expect(await post(restarted.url, "/payments", charge, { key: "k" })).toEqual(charged);
      const other = await post(restarted.url, "/payments", charge, { key: "k2" });
      expect(other.body.paymentId).not.toBe(charged.body.paymentId);
      expect(readLedgerFile(ledgerPath).charges).toHaveLength(2);
      expect((await get(restarted.url, "/ledger")).body).toEqual({
        charges: restarted.ledger.charges,
        declines: [],
        refunds: [],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
