import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CommandRejectedError, MessageConflictError } from "../../src/base/errors.js";
import { createRuntime } from "../../src/core/runtime.js";
import { type Ownership, sliceOfAddress } from "../../src/core/slices.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { PeerUnreachableError } from "../../src/ownership/peer-link.js";
import { CommandRouter, ForwardTimeoutError, forwardRowId } from "../../src/ownership/router.js";
import { shippingOrderActor, warehouseActor } from "../effects/fixtures/picklist-actors.js";

const SLICES = 8;
const owning = (owned: (slice: number) => boolean): Ownership => ({
  sliceCount: SLICES,
  owns: owned,
  fence: () => undefined,
  onChange: () => () => {},
});

/** Two workers on one memory journal: `a` owns the slice of `shipment/<id>`, `b` every other one. */
function twoWorkers() {
  const journal = new MemoryJournal({ sliceCount: SLICES });
  let id = "";
  for (let i = 0; ; i++) {
    id = `s${i}`;
    if (sliceOfAddress(`shipment/${id}`, SLICES) !== sliceOfAddress("warehouse/main", SLICES)) break;
  }
  const mine = sliceOfAddress(`shipment/${id}`, SLICES);
  const make = (name: string, ownership: Ownership) => {
    const registry = new Registry();
    const runtime = createRuntime({ journal, actors: [shippingOrderActor, warehouseActor], registry });
    const router = new CommandRouter({
      runtime,
      journal,
      ownership,
      registry,
      timeoutMs: 500,
      pollMs: { initial: 1, max: 5 },
    });
    const dispatcher = new Dispatcher({ journal, runtime: router, owner: name, ownership, registry });
    return { runtime, router, dispatcher };
  };
  return {
    journal,
    id,
    a: make(
      "a",
      owning((s) => s === mine),
    ),
    b: make(
      "b",
      owning((s) => s !== mine),
    ),
  };
}

/** Run `dispatcher` until `work` settles (it waits on a row only that dispatcher runs). */
async function alongside<T>(work: Promise<T>, dispatcher: Dispatcher): Promise<T> {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  done.catch(() => {}); // handled by the caller, once the loop ends
  while (!settled) {
    await dispatcher.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return done;
}

describe("CommandRouter", () => {
  it("a message to an actor owned elsewhere runs there, and its acknowledgement is forwarded back to the sender's owner", async () => {
    const { journal, id, a, b } = twoWorkers();
    await a.router.send(`shipment/${id}`, { type: "ShipOrder", lines: [{ sku: "x", quantity: 1 }] } as never);
    expect(await a.dispatcher.runOnce()).toBe(0);
    await alongside(b.dispatcher.runOnce(), a.dispatcher);
    expect((await a.runtime.state<{ picklist: string }>(`shipment/${id}`)).state.picklist).toBe("Accepted");
    // The sender's commands (the order, its acknowledgement) ran on a; the warehouse's on b.
    expect(a.runtime.stats.commands).toBe(2);
    expect(b.runtime.stats.commands).toBe(1);
    expect((await journal.listOutbox({ category: "message", stream: `shipment/${id}` }))[0]?.status).toBe("done");
  });

  it("throws the owner's refusal, a reused message id's conflict, and a timeout naming the address", async () => {
    const { id, a, b } = twoWorkers();
    const refused = alongside(
      a.router.send("warehouse/main", { type: "SendPicklist", orderId: id, deliveryId: "d", lines: [] } as never, {
        messageId: "m1",
      }),
      b.dispatcher,
    );
    await expect(refused).rejects.toThrow(CommandRejectedError);
    const reused = alongside(
      a.router.send("warehouse/main", { type: "SendPicklist", orderId: id, deliveryId: "other", lines: [] } as never, {
        messageId: "m1",
      }),
      b.dispatcher,
    );
    await expect(reused).rejects.toThrow(MessageConflictError);
    // Nobody runs b's slices now: the forward waits out its timeout.
    const waited = await a.router
      .send("warehouse/main", { type: "SendPicklist", orderId: id, deliveryId: "d2", lines: [] } as never)
      .catch((e: unknown) => e);
    expect(waited).toBeInstanceOf(ForwardTimeoutError);
    expect(String((waited as Error).message)).toContain('"warehouse/main"');
  });

  it("takes a repeated forward in other key order, or in another shape of the same type, as the same request", async () => {
    const { id, a, b } = twoWorkers();
    const send = (command: object) =>
      alongside(a.router.send("warehouse/main", command as never, { messageId: "m2" }), b.dispatcher).catch(
        (e: unknown) => e,
      );
    const first = await send({ type: "SendPicklist", orderId: id, deliveryId: "d", lines: [] });
    expect(first).toBeInstanceOf(CommandRejectedError);
    // The same command, its keys in another order (as PostgreSQL's jsonb returns them) and with a field
    // more (as a signed copy of an event handed over unsigned): the same request, not a reused id.
    const again = await send({ lines: [], deliveryId: "d", orderId: id, type: "SendPicklist", signature: "s" });
    expect(again).not.toBeInstanceOf(MessageConflictError);
    expect(again).toBeInstanceOf(CommandRejectedError);
  });
  it("warns once about a peer it cannot reach while every command to it falls back, each counted", async () => {
    const { id, journal, b } = twoWorkers();
    const warned: object[] = [];
    const nothing = () => {};
    const logger = { debug: nothing, info: nothing, error: nothing, warn: (fields: object) => warned.push(fields) };
    const registry = new Registry();
    const mine = sliceOfAddress(`shipment/${id}`, SLICES);
    const runtime = createRuntime({ journal, actors: [shippingOrderActor, warehouseActor], registry });
    const down = new PeerUnreachableError("connect ECONNREFUSED");
    const router = new CommandRouter({
      runtime,
      journal,
      ownership: owning((s) => s === mine),
      registry,
      logger,
      timeoutMs: 500,
      pollMs: { initial: 1, max: 5 },
      peers: { link: { send: () => Promise.reject(down), close: () => {} }, endpointOf: () => "http://b.invalid:1" },
    });
    for (let n = 0; n < 3; n++) {
      const sent = alongside(
        router.send("warehouse/main", { type: "SendPicklist", orderId: id, deliveryId: `d${n}`, lines: [] } as never),
        b.dispatcher,
      );
      await expect(sent).rejects.toThrow(CommandRejectedError); // refused by its owner, through the journal
    }
    expect(warned).toEqual([expect.objectContaining({ endpoint: "http://b.invalid:1", reason: "unreachable" })]);
    const fallbacks = (await registry.getSingleMetric("oncely_peer_fallbacks_total")?.get())?.values;
    expect(fallbacks).toEqual([
      expect.objectContaining({ labels: { actor: "warehouse", reason: "unreachable" }, value: 3 }),
    ]);
  });
  it("sends a row it is delivering for a slice it lost through the journal, never to the peer", async () => {
    const { id, journal, b } = twoWorkers();
    const registry = new Registry();
    const mine = sliceOfAddress(`shipment/${id}`, SLICES);
    const runtime = createRuntime({ journal, actors: [shippingOrderActor, warehouseActor], registry });
    let asked = 0;
    const router = new CommandRouter({
      runtime,
      journal,
      ownership: owning((s) => s === mine),
      registry,
      timeoutMs: 500,
      pollMs: { initial: 1, max: 5 },
      peers: {
        link: {
          send: () => {
            asked++;
            return Promise.reject(new PeerUnreachableError("not to be asked"));
          },
          close: () => {},
        },
        endpointOf: () => "http://b.invalid:1",
      },
    });
    const command = { type: "SendPicklist", orderId: id, deliveryId: "d", lines: [{ sku: "x", quantity: 1 }] };
    // A message row this worker claimed before its receiver's slice moved: its reply goes back through the row.
    const sent = alongside(
      router.send("warehouse/main", command as never, { messageId: "msg-1", deliveringRow: "message-row-1" }),
      b.dispatcher,
    );
    await expect(sent).resolves.toMatchObject({ forwarded: true });
    expect(asked).toBe(0);
    expect(await journal.getOutbox(forwardRowId("warehouse/main", "msg-1"))).toMatchObject({ status: "done" });
  });
});
