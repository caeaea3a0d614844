/**
 * Typed handles and command schemas. The types are checked by `npx tsc --noEmit` (expectTypeOf and
 * the @ts-expect-error lines fail the typecheck when a type is wrong); the rest runs.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { NotRegisteredError } from "../../src/errors.js";
import {
  type ActorHandle,
  CommandRejectedError,
  createHost,
  defineActor,
  InvalidInputError,
  type RoutedResult,
  Runtime,
  type SendResult,
} from "../../src/index.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { memoryJournal } from "../../src/testing/index.js";

interface Meter {
  total: number;
}
type Command = { type: "Add"; amount: number } | { type: "Reset" };
type Event = { type: "Added"; amount: number } | { type: "WasReset" };

const command = z.discriminatedUnion("type", [
  z.object({ type: z.literal("Add"), amount: z.number().int().positive() }),
  z.object({ type: z.literal("Reset") }),
]);

const meter = defineActor<Meter, Command, Event>({
  type: "meter",
  commands: command,
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => (event.type === "Added" ? { total: state.total + event.amount } : { total: 0 }),
  decide: (c) => {
    if (c.type === "Add" && c.amount <= 0) throw new CommandRejectedError("decide saw a bad amount");
    return { events: [c.type === "Add" ? { type: "Added", amount: c.amount } : { type: "WasReset" }] };
  },
});
const other = defineActor<{ n: string }, { type: "Other" }, { type: "Othered" }>({
  type: "other",
  initialState: () => ({ n: "" }),
  evolve: (s) => s,
  decide: () => ({}),
});

describe("typed handles: types", () => {
  it("send takes the actor's commands, state and waitFor its state", () => {
    const host = createHost({ journal: memoryJournal(), actors: [meter, other] });
    const meters = host.actor(meter);
    expectTypeOf(meters).toEqualTypeOf<ActorHandle<Meter, Command>>();
    expectTypeOf(meters.send).parameter(1).toEqualTypeOf<Command>();
    expectTypeOf(meters.send).returns.toEqualTypeOf<Promise<SendResult | RoutedResult>>();
    expectTypeOf(meters.state).returns.toEqualTypeOf<Promise<{ state: Meter; version: number }>>();
    expectTypeOf(host.actor(other).send).parameter(1).toEqualTypeOf<{ type: "Other" }>();
    const wrong = () => {
      // @ts-expect-error a command of another type
      void meters.send("1", { type: "Other" });
      // @ts-expect-error a field of the wrong type
      void meters.send("1", { type: "Add", amount: "5" });
      // @ts-expect-error a predicate on a field the state does not have
      void meters.waitFor("1", (s) => s.count > 0);
      // @ts-expect-error a predicate on another actor's state
      void meters.waitFor("1", (s: { n: string }) => s.n === "");
    };
    expect(wrong).toBeTypeOf("function");
  });
});

describe("typed handles", () => {
  it("send, state and waitFor by id, on the actor's address", async () => {
    const host = createHost({ journal: memoryJournal(), actors: [meter] });
    const meters = host.actor(meter);
    expect(meters.address("7")).toBe("meter/7");
    await meters.send("7", { type: "Add", amount: 5 });
    await meters.send("7", { type: "Add", amount: 2 }, { messageId: "m2" });
    const { state } = await meters.waitFor("7", (s) => s.total === 7, { timeoutMs: 1_000 });
    expect(state).toEqual({ total: 7 });
    expect(await meters.state("7")).toEqual({ state: { total: 7 }, version: 2 });
    expect((await host.state("meter/7")).state).toEqual({ total: 7 }); // the address form still works
    await host.stop();
  });

  it("a handle on an actor the host does not run is refused, naming it", () => {
    const host = createHost({ journal: memoryJournal(), actors: [meter] });
    expect(() => host.actor(other)).toThrow(NotRegisteredError);
    expect(() => host.actor(other)).toThrow(/"other" is not one of this host's actors \(meter\)/);
  });
});

describe("command schemas", () => {
  it("a command is checked where it enters, refused naming the field, before decide runs", async () => {
    const host = createHost({ journal: memoryJournal(), actors: [meter] });
    const meters = host.actor(meter);
    const refused = meters.send("1", { type: "Add", amount: -3 });
    await expect(refused).rejects.toThrow(InvalidInputError);
    await expect(meters.send("1", { type: "Add", amount: -3 })).rejects.toThrow(/invalid command for "meter\/1"/);
    const error = await meters.send("1", { type: "Add", amount: 1.5 }).catch((e: InvalidInputError) => e);
    expect((error as InvalidInputError).issues.join()).toMatch(/^amount: /);
    // The address form and untyped callers (a consumer's route, HTTP) pass through the same check.
    expect(() => host.send("meter/1", { type: "Add" })).toThrow(InvalidInputError);
    expect(() => host.runtime.parseAndSend("meter/1", { type: "Nope" })).toThrow(/type/);
    expect((await meters.state("1")).version).toBe(0);
    await host.stop();
  });

  it("a consumer's route to the actor passes through the same check", async () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [meter] });
    const consumer = new Consumer({
      name: "meter-feed",
      journal,
      runtime,
      handler: {
        kind: "command",
        route: (event) => ({ address: `meter/${event.aggregateId}`, command: event.payload as Command }),
      },
    });
    const envelope = (eventId: string, payload: unknown) => ({
      eventId,
      type: "Metered",
      source: "feed",
      aggregateId: "9",
      occurredAt: new Date(0).toISOString(),
      correlationId: eventId,
      causationId: eventId,
      payload,
    });
    await expect(consumer.handle(envelope("e1", { type: "Add", amount: 0 }))).rejects.toThrow(
      /invalid command for "meter\/9": amount: /,
    );
    await consumer.handle(envelope("e2", { type: "Add", amount: 4 }));
    expect((await runtime.state("meter/9")).state).toEqual({ total: 4 });
  });

  it("decide gets the schema's output", async () => {
    const trimmed = defineActor<{ names: string[] }, { type: "Name"; name: string }, { type: "Named"; name: string }>({
      type: "trimmed",
      commands: z.object({ type: z.literal("Name"), name: z.string().trim().min(1) }),
      initialState: () => ({ names: [] }),
      evolve: (s, e) => ({ names: [...s.names, e.name] }),
      decide: (c) => ({ events: [{ type: "Named", name: c.name }] }),
    });
    const host = createHost({ journal: memoryJournal(), actors: [trimmed] });
    await host.actor(trimmed).send("1", { type: "Name", name: "  ada " });
    expect((await host.actor(trimmed).state("1")).state.names).toEqual(["ada"]);
    await host.stop();
  });
});
