import { afterEach, describe, expect, it } from "vitest";
import { type EmailProvider, type EmailProviderOptions, startEmailProvider } from "./email/server.js";
import { get, post } from "./test-http.js";

const started: EmailProvider[] = [];
async function start(options: EmailProviderOptions = {}) {
  const provider = await startEmailProvider(options);
  started.push(provider);
  return provider;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.close()));
});

const mail = { to: "ada@example.com", template: "order-confirmation", orderId: "42" };
const key = "order:42:confirmation-email";

describe("email provider", () => {
  it("sends once per Idempotency-Key and answers the same messageId again", async () => {
    const provider = await start();
    const first = await post(provider.url, "/emails", mail, { key });
    expect(first).toEqual({ status: 202, body: { messageId: expect.any(String) } });
    expect(await post(provider.url, "/emails", mail, { key })).toEqual(first);
    expect(provider.ledger.emails).toEqual([
      { ...mail, messageId: first.body.messageId, idempotencyKey: key, at: expect.any(String) },
    ]);
  });

  it("answers 409 for the same key with another body", async () => {
    const provider = await start();
    await post(provider.url, "/emails", mail, { key });
    expect((await post(provider.url, "/emails", { ...mail, template: "order-shipped" }, { key })).status).toBe(409);
    expect(provider.ledger.emails).toHaveLength(1);
  });

  it("looks a mail up by key", async () => {
    const provider = await start();
    const { body } = await post(provider.url, "/emails", mail, { key });
    expect(await get(provider.url, `/emails?idempotencyKey=${encodeURIComponent(key)}`)).toEqual({
      status: 200,
      body: { messageId: body.messageId, status: "sent", ...mail },
    });
    expect((await get(provider.url, "/emails?idempotencyKey=other")).status).toBe(404);
  });

  it.each([
    ["a bad address", { ...mail, to: "not-an-address" }, "to"],
    ["an empty template", { ...mail, template: "" }, "template"],
    ["a missing orderId", { to: mail.to, template: mail.template }, "orderId"],
  ])("answers 400 naming the field for %s", async (_name, body, field) => {
    const provider = await start();
    const answer = await post(provider.url, "/emails", body, { key });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain(field);
    expect(provider.ledger.emails).toHaveLength(0);
  });

  it("failRate sends nothing; dropAfterRate sends and then resets the connection", async () => {
    const provider = await start({ faults: { failRate: 1 } });
    expect((await post(provider.url, "/emails", mail, { key })).status).toBe(503);
    expect(provider.ledger.emails).toHaveLength(0);
    provider.setFaults({ failRate: 0, dropAfterRate: 1 });
    await expect(post(provider.url, "/emails", mail, { key })).rejects.toThrow(TypeError);
    expect(provider.ledger.emails).toHaveLength(1);
  });
});
