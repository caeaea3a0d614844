import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageConflictError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { counter } from "./fixtures/counter.js";

let runtimes = 0;
const setup = (journal: Journal = memoryJournal()) =>
  createRuntime({ journal, actors: [counter], clock: new SimulatedClock(), ids: sequentialIds(`mc${++runtimes}`) });

const conflictOf = async (work: Promise<unknown>): Promise<MessageConflictError> => {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(MessageConflictError);
  return error as MessageConflictError;
};

describe("a message id sent again", () => {
  it("with the same command is a duplicate answered with the stored reply", async () => {
    const runtime = setup();
    await runtime.send("counter/a", { type: "Add", amount: 2 }, { messageId: "req-1" });
    const again = await runtime.send("counter/a", { type: "Add", amount: 2 }, { messageId: "req-1" });
    expect(again).toMatchObject({ reply: 2, version: 1, duplicate: true, events: [] });
  });

  it("with another command is a conflict naming the actor and the message id; nothing is committed", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    await runtime.send("counter/a", { type: "Add", amount: 2 }, { messageId: "req-1" });
    const error = await conflictOf(runtime.send("counter/a", { type: "Add", amount: 5 }, { messageId: "req-1" }));
    expect(error.message).toContain('actor "counter/a"');
    expect(error.message).toContain('message id "req-1"');
    expect(error.kind).toBe("payload");
    expect(error.retryable).toBe(false);
    expect((await journal.readStream("counter/a")).map((e) => e.data)).toEqual([{ type: "Added", amount: 2 }]);
    // The stored reply is still the first command's, and a fresh runtime (no cache) sees the same.
    const fresh = setup(journal);
    await conflictOf(fresh.send("counter/a", { type: "Add", amount: 5 }, { messageId: "req-1" }));
    expect(await fresh.send("counter/a", { type: "Add", amount: 2 }, { messageId: "req-1" })).toMatchObject({
      reply: 2,
      duplicate: true,
    });
  });

  it("with another command that decide refuses is still a conflict, not the refusal", async () => {
    const runtime = setup();
    await runtime.send("counter/a", { type: "Add", amount: 2 }, { messageId: "req-1" });
    await conflictOf(runtime.send("counter/a", { type: "Boom" }, { messageId: "req-1" }));
  });

  it("whose inbox row was written before commands were hashed stays a duplicate", async () => {
    const journal = memoryJournal();
    // An inbox row as older versions wrote it: the bare reply.
    await journal.commit({
      stream: "counter/a",
      expectedVersion: 0,
      events: [{ eventId: "e1", type: "Added", data: { type: "Added", amount: 2 } }],
      inbox: { consumer: "counter/a", messageId: "req-1", reply: 2 },
      now: 0,
    });
    const again = await setup(journal).send("counter/a", { type: "Add", amount: 5 }, { messageId: "req-1" });
    expect(again).toMatchObject({ reply: 2, version: 1, duplicate: true });
  });

  it("is the same command whatever the key order, undefined fields or a trip through JSON", async () => {
    const json = fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 4,
    });
    await fc.assert(
      fc.asyncProperty(json, async (a) => {
        const runtime = setup();
        const first = { ...a, type: "Anything" };
        await runtime.send("counter/p", first, { messageId: "m" });
        const reread = JSON.parse(JSON.stringify(first)) as Record<string, unknown>;
        const reversed = Object.fromEntries(Object.entries(reread).reverse());
        const again = await runtime.send(
          "counter/p",
          { ...reversed, extra: undefined, type: "Anything" },
          {
            messageId: "m",
          },
        );
        expect(again.duplicate).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it("of the same shape with any other value is a conflict", async () => {
    const order = fc.record({
      email: fc.string(),
      amount: fc.integer(),
      lines: fc.array(fc.record({ sku: fc.string(), quantity: fc.nat() }), { minLength: 1, maxLength: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(order, order, async (a, b) => {
        const runtime = setup();
        await runtime.send("counter/p", { type: "Place", ...a }, { messageId: "m" });
        const sent = runtime.send("counter/p", { type: "Place", ...b }, { messageId: "m" });
        if (JSON.stringify(sorted(a)) === JSON.stringify(sorted(b))) expect((await sent).duplicate).toBe(true);
        else await conflictOf(sent);
      }),
      { numRuns: 100 },
    );
  });

  it("of the same type in another shape is the same request, as a client retrying across an upgrade sends it", async () => {
    // Release 2 renamed a field and added one: the retry of a request placed under release 1.
    const runtime = setup();
    await runtime.send("counter/a", { type: "Place", customerEmail: "c@example.com", amount: 1 }, { messageId: "p" });
    const retried = { type: "Place", email: "c@example.com", amount: 1, channel: "web" };
    expect((await runtime.send("counter/a", retried, { messageId: "p" })).duplicate).toBe(true);
  });

  it("leaves effect outcomes and fired timers to the first final outcome of their key", async () => {
    // Outcomes carry ids derived from the key: a later, different outcome is a duplicate, not a conflict.
    const journal = memoryJournal();
    const runtime = setup(journal);
    await runtime.send("counter/a", { type: "Notify" });
    const succeeded = {
      type: "oncely.effect.succeeded",
      key: "counter:a:notify",
      kind: "notify",
      input: { total: 0 },
      result: { id: 1 },
      attempt: 1,
      via: "run",
    } as const;
    expect((await runtime.send("counter/a", succeeded)).duplicate).toBe(false);
    const later = { ...succeeded, result: { id: 2 }, attempt: 2, via: "operator" as const };
    expect((await runtime.send("counter/a", later)).duplicate).toBe(true);
    const failed = { ...succeeded, type: "oncely.effect.failed" as const, error: "declined" };
    expect((await runtime.send("counter/a", failed, { messageId: "counter:a:notify#outcome" })).duplicate).toBe(true);
  });
});

describe("messages between actors", () => {
  it("are duplicates when delivered again from the outbox, whatever JSON did to the command", async () => {
    const journal = memoryJournal();
    const receiver = defineActor<{ n: number }, { type: "Take"; at: string; note?: string }, { type: "Took" }>({
      type: "receiver",
      initialState: () => ({ n: 0 }),
      evolve: (state) => ({ n: state.n + 1 }),
      decide: () => ({ events: [{ type: "Took" }], reply: "taken" }),
    });
    const runtime = createRuntime({ journal, actors: [receiver], ids: sequentialIds("mc-msg") });
    // In memory (a row handed over at commit): a Date, a field left undefined.
    const handed = { type: "Take" as const, at: new Date(0) as unknown as string, note: undefined };
    await runtime.send("receiver/r", handed, { messageId: "sender:1:take" });
    // Read back from the outbox: its JSON.
    const stored = JSON.parse(JSON.stringify(handed)) as { type: "Take"; at: string };
    const again = await runtime.send("receiver/r", stored, { messageId: "sender:1:take" });
    expect(again).toMatchObject({ reply: "taken", duplicate: true });
  });
});

function sorted(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(sorted);
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => [key, sorted(record[key])]),
  );
}
