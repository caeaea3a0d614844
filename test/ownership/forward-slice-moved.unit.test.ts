import { describe, expect, it } from "vitest";
import { CommandRejectedError, NotOwnerError } from "../../src/base/errors.js";
import { createRuntime } from "../../src/core/runtime.js";
import { type Ownership, sliceOfAddress } from "../../src/core/slices.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { CommandRouter, forwardRowId, type LocalRuntime } from "../../src/ownership/router.js";
import { shippingOrderActor, warehouseActor } from "../effects/fixtures/picklist-actors.js";

const SLICES = 8;
const WAREHOUSE = "warehouse/main";
const slice = sliceOfAddress(WAREHOUSE, SLICES);

describe("a forward whose slice moves while its row is being delivered", () => {
  it("is released to the new owner at once, not waited on by the old one until its timeout", async () => {
    const journal = new MemoryJournal({ sliceCount: SLICES });
    const holder = { of: "a" as "a" | "b" };
    const ownership = (name: "a" | "b"): Ownership => ({
      sliceCount: SLICES,
      owns: (s) => (s === slice ? holder.of === name : name === "b"),
      fence: () => undefined,
      onChange: () => () => {},
    });
    const make = (name: "a" | "b", movesOnSend: boolean) => {
      const runtime = createRuntime({
        journal,
        actors: [shippingOrderActor, warehouseActor],
        ownership: ownership(name),
      });
      // The slice moves to b between the router's ownership check and the runtime's own.
      const local: LocalRuntime = {
        send: (address, command, options) => {
          if (movesOnSend && address === WAREHOUSE) holder.of = "b";
          return runtime.send(address, command, options);
        },
      };
      // A timeout far past the test's: the old code's wait on its own row would fail the test.
      const router = new CommandRouter({ runtime: local, journal, ownership: ownership(name), timeoutMs: 120_000 });
      const dispatcher = new Dispatcher({ journal, runtime: router, owner: name, ownership: ownership(name) });
      return { router, dispatcher };
    };
    const a = make("a", true);
    const b = make("b", false);

    // b forwards to the warehouse, which a owns: the forward row waits for a's dispatcher.
    holder.of = "a";
    const forwarded = b.router
      .send(WAREHOUSE, { type: "SendPicklist", orderId: "o1", deliveryId: "d", lines: [] } as never, {
        messageId: "m1",
      })
      .catch((e: unknown) => e);
    const rowId = forwardRowId(WAREHOUSE, "m1");
    await expect.poll(() => journal.getOutbox(rowId).then((r) => r?.status)).toBe("pending");

    // a claims it, and loses the slice before delivering: the row goes back at once, counted as no attempt.
    expect(await a.dispatcher.runOnce()).toBe(1);
    const released = await journal.getOutbox(rowId);
    expect(released).toMatchObject({ status: "pending", attempts: 0 });
    expect(released?.lastError).toContain(NotOwnerError.name);

    // The new owner claims and delivers it; the forwarder gets the answer (a refusal of an empty picklist).
    expect(await b.dispatcher.runOnce()).toBe(1);
    expect(await forwarded).toBeInstanceOf(CommandRejectedError);
    expect((await journal.getOutbox(rowId))?.status).toBe("done");
  }, 15_000);
});
