import { describe, expect, it } from "vitest";
import { InvalidInputError, MessageConflictError } from "../../src/base/errors.js";
import { isStorableText } from "../../src/base/storable-text.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { type Envelope, parseEnvelope, storableText } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, producer } from "./support/orders.js";
import { poisonSuite } from "./support/poison-suite.js";

poisonSuite("memory", async () => ({ journal: memoryJournal(), close: async () => {} }));

describe("storable text at the boundaries", () => {
  it("tells storable text from NUL and unpaired surrogates (paired ones are fine)", () => {
    expect(isStorableText("ord_1 注文 😀 \\u0000")).toBe(true);
    expect(isStorableText("a\u0000")).toBe(false);
    expect(isStorableText("\uD83D")).toBe(false);
    expect(isStorableText("x\uDE00")).toBe(false);
    expect(storableText.safeParse("sku\u0000").success).toBe(false);
  });

  it("the envelope schema names every offending field, in ids and deep in the payload (keys too)", () => {
    const event = orderEvent("o1", 1);
    const hostile = {
      ...event,
      source: "orders\u0000",
      payload: { lines: [{ sku: "ok" }, { sku: "\uDBFF" }], "k\u0000": 1 },
    };
    const error = (() => {
      try {
        parseEnvelope(hostile);
      } catch (e) {
        return e as InvalidInputError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error?.issues).toEqual(
      expect.arrayContaining([
        "source: must not contain NUL (U+0000) or an unpaired UTF-16 surrogate",
        "payload.lines.1.sku: must not contain an unpaired UTF-16 surrogate (U+DBFF) (at character 0)",
        "payload.k\u0000: key must not contain NUL (U+0000) (at character 1)",
      ]),
    );
    expect(() => parseEnvelope({ ...event, aggregateVersion: 2 ** 31 })).toThrow(/aggregateVersion/);
    expect(parseEnvelope(event)).toEqual(event);
  });

  it("the runtime refuses a command whose message id or address holds such text, naming the field", async () => {
    const runtime = createRuntime({ journal: memoryJournal(), actors: [producer] });
    const command = { type: "Record", event: "X" } as const;
    await expect(async () => runtime.send("producer/p1", command, { messageId: "m\u0000" })).rejects.toThrow(
      /messageId: must not contain NUL/,
    );
    await expect(async () => runtime.send("producer/p\uD800", command)).rejects.toThrow(
      /address: must not contain an unpaired UTF-16 surrogate/,
    );
    await expect(async () => runtime.send("producer/p1", command, { messageId: "m\u0000" })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });
});

describe("conflicts through a command consumer (facts mode)", () => {
  it("an eventId that comes again with other content is a conflict, not a duplicate; the actor acts once", async () => {
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [producer] });
    const consumer = new Consumer({
      name: "router",
      journal,
      runtime,
      clock: new SimulatedClock(),
      ids: sequentialIds("dl"),
      metrics: messagingMetrics(),
      handler: {
        kind: "command",
        route: (e) => ({ address: `producer/${e.aggregateId}`, command: { type: "Record", event: e.type } }),
      },
    });
    const event = orderEvent("o1", 1);
    const forged: Envelope = { ...event, type: "OrderCancelled" };
    expect((await consumer.handle(event)).outcome).toBe("applied");
    expect((await consumer.handle(event)).outcome).toBe("duplicate");
    await expect(consumer.handle(forged)).rejects.toBeInstanceOf(MessageConflictError);
    expect((await runtime.state<{ recorded: string[] }>("producer/o1")).state.recorded).toEqual(["OrderPlaced"]);
  });
});
