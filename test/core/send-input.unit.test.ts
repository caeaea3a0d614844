import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError } from "../../src/base/errors.js";
import type { Typed } from "../../src/core/decider.js";
import type { SendOptions } from "../../src/core/runtime.js";
import { checkSendInput } from "../../src/core/send-input.js";
import { createHost } from "../../src/host/host.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { counter } from "./fixtures/counter.js";

const journal = memoryJournal();
const host = createHost({ journal, actors: [counter] });
/** What a plain JavaScript caller may pass: anything. */
const send = async (address: unknown, command: unknown, options?: unknown) =>
  host.send(address as string, command as Typed, options as SendOptions);

const refusal = async (work: Promise<unknown>): Promise<InvalidInputError> => {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
};

describe("host.send refuses what is not a send, naming the field", () => {
  it("a command that is not an object with a string type", async () => {
    expect((await refusal(send("counter/a", {}))).issues).toEqual([
      "command.type: Invalid input: expected string, received undefined",
    ]);
    expect((await refusal(send("counter/a", null))).issues).toEqual([
      "command: Invalid input: expected object, received null",
    ]);
    expect((await refusal(send("counter/a", "Add"))).issues).toEqual([
      "command: Invalid input: expected object, received string",
    ]);
    expect((await refusal(send("counter/a", { type: 7 }))).message).toMatch(
      /^invalid send to "counter\/a": command\.type/,
    );
    expect((await refusal(send("counter/a", { type: "" }))).issues[0]).toMatch(/^command\.type: Too small/);
  });

  it("an address that is not a string, or not type/id", async () => {
    expect((await refusal(send(undefined, { type: "Add", amount: 1 }))).issues).toEqual([
      "address: Invalid input: expected string, received undefined",
    ]);
    expect((await refusal(send("counter", { type: "Add", amount: 1 }))).message).toContain('"type/id"');
  });

  it("options that are not an object, of the wrong type, or unknown", async () => {
    expect((await refusal(send("counter/a", { type: "Add", amount: 1 }, null))).issues).toEqual([
      "options: Invalid input: expected object, received null",
    ]);
    const typed = await refusal(send("counter/a", { type: "Add", amount: 1 }, { messageId: 5, expectNew: "yes" }));
    expect(typed.issues).toEqual([
      "options.messageId: Invalid input: expected string, received number",
      "options.expectNew: Invalid input: expected boolean, received string",
    ]);
    const misspelt = await refusal(send("counter/a", { type: "Add", amount: 1 }, { messageID: "req-1" }));
    expect(misspelt.issues).toEqual([
      'options: Unrecognized key: "messageID" (known options: messageId, causationId, correlationId, expectNew, deliveringRow)',
    ]);
    expect((await refusal(send("counter/a", { type: "Add", amount: 1 }, { messageId: "" }))).issues[0]).toMatch(
      /^options\.messageId: Too small/,
    );
  });

  it("and commits nothing for them, while a valid send goes through", async () => {
    expect(await journal.streamVersion("counter/a")).toBe(0);
    const ok = await send("counter/a", { type: "Add", amount: 1 }, { messageId: "m", correlationId: "c" });
    expect(ok).toMatchObject({ version: 1, duplicate: false });
  });
});

it("host.state and host.waitFor name an address that is not a string", async () => {
  await expect(async () => host.state(undefined as unknown as string)).rejects.toThrow(
    'actor address must be a string "type/id", got undefined',
  );
  await expect(async () => host.waitFor(null as unknown as string, () => true)).rejects.toThrow(
    'actor address must be a string "type/id", got null',
  );
});

describe("checkSendInput", () => {
  // Restated from the specification of a send (src/core/send-input.ts): what it must refuse.
  const schema = z.object({
    address: z.string(),
    command: z.looseObject({ type: z.string().min(1) }),
    options: z
      .strictObject({
        messageId: z.string().min(1).optional(),
        causationId: z.string().optional(),
        correlationId: z.string().optional(),
        expectNew: z.boolean().optional(),
        deliveringRow: z.string().min(1).optional(),
      })
      .optional(),
  });
  const value = fc.oneof(
    fc.string({ maxLength: 2 }),
    fc.boolean(),
    fc.integer(),
    fc.constant(undefined),
    fc.constant(null),
  );
  const key = fc.constantFrom(
    "messageId",
    "causationId",
    "correlationId",
    "expectNew",
    "deliveringRow",
    "messageID",
    "type",
  );
  const options = fc.oneof(
    fc.dictionary(key, value, { maxKeys: 4 }),
    fc.dictionary(key, value, { maxKeys: 2 }).map((o) => Object.assign(Object.create({ inherited: 1 }), o) as unknown),
    value,
  );
  const command = fc.oneof(
    fc.record({ type: value, amount: fc.integer() }, { requiredKeys: [] }),
    fc.record({ type: value }).map((c) => Object.assign(Object.create({ x: 1 }), c) as unknown),
    fc.constantFrom([], ["Add"], "Add", null),
  );

  it("refuses exactly what the schema refuses", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 3 }), value), command, options, (a, c, o) => {
        let refused = false;
        try {
          checkSendInput(a, c, o);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidInputError);
          refused = true;
        }
        expect(refused).toBe(!schema.safeParse({ address: a, command: c, options: o }).success);
      }),
      { numRuns: 5_000 },
    );
  });
});
