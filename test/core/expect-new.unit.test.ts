import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CommandRejectedError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime, type SendResult } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { SimulatedClock } from "../../src/testing/clock.js";

/** An account: `Open` once (a second is answered, not refused); `Deposit` only once open. */
type AccountCommand = { type: "Open" } | { type: "Deposit"; amount: number };
type AccountEvent = { type: "Opened" } | { type: "Deposited"; amount: number };
interface Account {
  open: boolean;
  balance: number;
}

const account = defineActor<Account, AccountCommand, AccountEvent>({
  type: "account",
  initialState: () => ({ open: false, balance: 0 }),
  evolve: (state, event) =>
    event.type === "Opened" ? { ...state, open: true } : { ...state, balance: state.balance + event.amount },
  decide(command, state) {
    if (command.type === "Open")
      return state.open ? { reply: "already open" } : { events: [{ type: "Opened" }], reply: "opened" };
    if (!state.open) throw new CommandRejectedError("the account is not open");
    return { events: [{ type: "Deposited", amount: command.amount }], reply: state.balance + command.amount };
  },
});

/** The journal's reads, counted: what `expectNew` is there to save. */
function countingReads(journal: Journal): { journal: Journal; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(journal, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      if (key === "readStream" || key === "latestSnapshot" || key === "streamVersion") {
        return (...args: unknown[]) => {
          reads++;
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
  return { journal: counted, reads: () => reads };
}

let runtimes = 0;
const runtimeOn = (journal: Journal) =>
  createRuntime({ journal, actors: [account], clock: new SimulatedClock(), ids: sequentialIds(`x${++runtimes}`) });

describe("sending to an actor expected to be new (expectNew)", () => {
  it("decides a new actor from its initial state with no read, and commits against an empty stream", async () => {
    const { journal, reads } = countingReads(memoryJournal());
    const runtime = runtimeOn(journal);
    const result = await runtime.send("account/a", { type: "Open" }, { expectNew: true });
    expect(result).toMatchObject({ reply: "opened", version: 1, duplicate: false });
    expect(reads()).toBe(0);
    expect(runtime.stats).toMatchObject({ recoveries: 0, conflicts: 0 });
    // Held from then on like any actor: the next command reads nothing either.
    await runtime.send("account/a", { type: "Deposit", amount: 5 });
    expect(reads()).toBe(0);
    expect((await journal.readStream("account/a")).map((e) => e.type)).toEqual(["Opened", "Deposited"]);
  });

  it("an actor with history after all: the commit conflicts, nothing of it is written, and it decides again on the stream", async () => {
    const journal = memoryJournal();
    await runtimeOn(journal).send("account/a", { type: "Open" });
    const runtime = runtimeOn(journal); // another process, or after a restart: the actor is not held
    const result = await runtime.send("account/a", { type: "Open" }, { expectNew: true });
    expect(result).toMatchObject({ reply: "already open", version: 1 });
    expect(runtime.stats.conflicts).toBe(1);
    expect((await journal.readStream("account/a")).map((e) => e.type)).toEqual(["Opened"]);
  });

  it("a command refused on the new state but not on the stream's is decided again, not refused", async () => {
    const journal = memoryJournal();
    await runtimeOn(journal).send("account/a", { type: "Open" });
    const result = await runtimeOn(journal).send("account/a", { type: "Deposit", amount: 7 }, { expectNew: true });
    expect(result).toMatchObject({ reply: 7, version: 2 });
  });

  it("a command refused on a state that really is new is refused, and writes nothing", async () => {
    const journal = memoryJournal();
    await expect(
      runtimeOn(journal).send("account/b", { type: "Deposit", amount: 1 }, { expectNew: true }),
    ).rejects.toThrow(CommandRejectedError);
    expect(await journal.streamVersion("account/b")).toBe(0);
  });

  it("a repeated message id is answered from the inbox with the first reply", async () => {
    const journal = memoryJournal();
    const first = await runtimeOn(journal).send("account/a", { type: "Open" }, { messageId: "m1", expectNew: true });
    const again = await runtimeOn(journal).send("account/a", { type: "Open" }, { messageId: "m1", expectNew: true });
    expect(first).toMatchObject({ reply: "opened", duplicate: false });
    expect(again).toMatchObject({ reply: "opened", duplicate: true });
    expect(await journal.streamVersion("account/a")).toBe(1);
  });

  it("is ignored for an actor the runtime holds", async () => {
    const journal = memoryJournal();
    const runtime = runtimeOn(journal);
    await runtime.send("account/a", { type: "Open" });
    await runtime.send("account/a", { type: "Deposit", amount: 3 }, { expectNew: true });
    expect(runtime.stats.conflicts).toBe(0);
    expect(await journal.streamVersion("account/a")).toBe(2);
  });

  it("never changes an outcome: any commands, any hints, any restarts give the replies and streams of no hints", async () => {
    const command = fc.oneof(
      fc.constant<AccountCommand>({ type: "Open" }),
      fc.integer({ min: 1, max: 9 }).map((amount): AccountCommand => ({ type: "Deposit", amount })),
    );
    const step = fc.record({
      actor: fc.constantFrom("account/a", "account/b"),
      command,
      expectNew: fc.boolean(),
      restart: fc.boolean(),
      repeat: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const run = async (hinted: boolean) => {
          const journal = memoryJournal();
          let runtime = runtimeOn(journal);
          const replies: unknown[] = [];
          for (const [i, s] of steps.entries()) {
            if (s.restart) runtime = runtimeOn(journal);
            // A repeat reuses the previous step's message id: a retry, answered from the inbox.
            const messageId = `m${s.repeat && i > 0 ? i - 1 : i}`;
            const sent: SendResult | Error = await runtime
              .send(s.actor, s.command, { messageId, expectNew: hinted && s.expectNew })
              .catch((error: Error) => error);
            replies.push(sent instanceof Error ? sent.constructor.name : [sent.reply, sent.version, sent.duplicate]);
          }
          const streams = await Promise.all(
            ["account/a", "account/b"].map(async (a) => (await journal.readStream(a)).map((e) => e.data)),
          );
          return { replies, streams };
        };
        expect(await run(true)).toEqual(await run(false));
      }),
      { numRuns: 150 },
    );
  });
});
