import { InvalidInputError } from "oncely";
import { memoryJournal } from "oncely/testing";
import { expect, expectTypeOf, it } from "vitest";
import { renewal, subscriptions } from "./app.js";
import { cards, mail } from "./providers.js";

it("charges once, mails a receipt, publishes SubscriptionRenewed and projects revenue in order", async () => {
  const journal = memoryJournal();
  const host = subscriptions(journal);
  const renewals = host.actor(renewal);
  await host.start();
  await renewals.send("ada-2026-12", { type: "Renew", customer: "ada", amount: 900 }, { messageId: "r1" });
  await renewals.send("ada-2026-12", { type: "Renew", customer: "ada", amount: 900 }, { messageId: "r1" }); // a retry
  await renewals.send("ada-2027-01", { type: "Renew", customer: "ada", amount: 900 }, { messageId: "r2" });
  const { state } = await renewals.waitFor("ada-2026-12", (s) => s.status === "Completed", { timeoutMs: 5_000 });
  expectTypeOf(state.results.charge).toEqualTypeOf<{ chargeId: string } | undefined>();
  expect(state.results.charge?.chargeId).toMatch(/^ch_/);
  await host.drain({ timeoutMs: 10_000 });
  expect([...cards.charges.keys()].sort()).toEqual(["renewal:ada-2026-12:charge", "renewal:ada-2027-01:charge"]);
  expect(mail.sent.filter((m) => m.to === "ada")).toHaveLength(2);
  expect((await journal.getDocument("revenue", "ada"))?.doc).toEqual({ total: 1800, renewals: 2 });
  // On the journal transport each commit appends its events to the published log itself.
  const published = (await journal.readPublished(0)).map(
    (entry) => JSON.parse(entry.body) as { aggregateVersion: number },
  );
  expect(published.map((envelope) => envelope.aggregateVersion).sort()).toEqual([1, 2]);
  await host.stop();
});

it("a declined card fails the flow: no receipt, nothing published", async () => {
  const journal = memoryJournal();
  const host = subscriptions(journal);
  await host.start();
  await host.actor(renewal).send("bob-1", { type: "Renew", customer: "bob", amount: 50_000 });
  const { state } = await host.actor(renewal).waitFor("bob-1", (s) => s.status === "Failed", { timeoutMs: 5_000 });
  expect(state.failure).toEqual({ step: "charge", error: "Error: card declined" });
  await host.drain({ timeoutMs: 10_000 });
  expect(mail.sent.filter((m) => m.to === "bob")).toEqual([]);
  expect(await journal.getDocument("revenue", "bob")).toBeUndefined();
  await host.stop();
});

it("a command is checked where it enters, naming the field", async () => {
  const host = subscriptions(memoryJournal());
  await expect(host.actor(renewal).send("x", { type: "Renew", customer: "", amount: 5 })).rejects.toThrow(
    InvalidInputError,
  );
  await expect(host.actor(renewal).send("x", { type: "Renew", customer: "c", amount: 0 })).rejects.toThrow(/amount/);
  await host.stop();
});
