import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import type { Commit, Journal } from "../../src/journal/types.js";
import { listGaps, skipGap, supplyGapEvent } from "../../src/messaging/gap-tools.js";
import { GAP_ALERTS } from "../../src/messaging/gaps.js";
import { sequencedView } from "./support/gap-world.js";
import { orderEvent } from "./support/orders.js";

/**
 * The operator's gap tools act on the journal alone (the CLI and the console have no consumer):
 * a skip moves the checkpoint and marks the alert, a supplied event is parked at its version, and
 * the running consumer's next gap check applies what is then next, through the normal path.
 */
const setup = sequencedView;

/** Versions 1 applied, 4 and 5 parked: 2..3 missing, alerted on. */
async function gapOf2to3(fx: ReturnType<typeof setup>) {
  await fx.consumer.handle(orderEvent("o1", 1));
  await fx.consumer.handle(orderEvent("o1", 4));
  await fx.consumer.handle(orderEvent("o1", 5));
  fx.clock.advance(5_000);
  expect(await fx.consumer.checkGaps()).toHaveLength(1);
}

describe("gap tools: listGaps", () => {
  it("lists each source with parked messages: checkpoint, missing versions, parked versions, the alert", async () => {
    const fx = setup();
    await gapOf2to3(fx);
    const gaps = await listGaps(fx.journal);
    expect(gaps).toEqual([
      {
        consumer: "view",
        source: "orders/o1",
        checkpoint: 1,
        firstMissing: 2,
        lastMissing: 3,
        parkedVersions: [4, 5],
        oldestParkedAt: fx.start,
        releasable: false,
        alert: expect.objectContaining({ fromVersion: 2, toVersion: 3, status: "open" }),
      },
    ]);
    // A gap not yet alerted on shows when its consumer is named.
    await fx.consumer.handle(orderEvent("o2", 3));
    expect((await listGaps(fx.journal, { consumer: "view" })).map((g) => [g.source, g.alert?.status ?? null])).toEqual([
      ["orders/o1", "open"],
      ["orders/o2", null],
    ]);
  });
});

describe("gap tools: skipGap", () => {
  it("moves the checkpoint below the first parked version and marks the alert skipped, naming the operator", async () => {
    const fx = setup();
    await gapOf2to3(fx);
    const skipped = await skipGap(fx.journal, {
      consumer: "view",
      source: "orders/o1",
      by: "ada",
      note: "producer lost them",
      clock: fx.clock,
    });
    expect(skipped).toMatchObject({ from: 2, to: 3, parkedVersions: [4, 5], alertMarked: true });
    expect(await fx.journal.getCheckpoint("view", "orders/o1")).toBe(3);
    const [alert] = await fx.journal.listDocuments(GAP_ALERTS);
    expect(alert?.doc).toMatchObject({
      status: "skipped",
      note: "versions 2..3 skipped by ada: producer lost them",
      resolvedAt: fx.clock.now(),
    });
    // The running consumer's next gap check releases what was parked.
    await fx.consumer.checkGaps();
    expect(await fx.versions()).toEqual([1, 4, 5]);
    expect(await fx.journal.listParked("view")).toEqual([]);
  });

  it("skips a gap never alerted on, and refuses when there is no gap", async () => {
    const fx = setup();
    await fx.consumer.handle(orderEvent("o1", 3));
    const by = { by: "ada", clock: fx.clock };
    await expect(skipGap(fx.journal, { consumer: "view", source: "orders/o1", ...by })).resolves.toMatchObject({
      from: 1,
      to: 2,
      alertMarked: false,
    });
    // Version 3 is next now: nothing is missing until the release.
    await expect(skipGap(fx.journal, { consumer: "view", source: "orders/o1", ...by })).rejects.toThrow(
      /no gap: consumer "view" on "orders\/o1" misses no version \(checkpoint 2, version 3 is parked next/,
    );
    await expect(skipGap(fx.journal, { consumer: "view", source: "orders/o9", ...by })).rejects.toThrow(
      /no gap: consumer "view" has nothing parked for source "orders\/o9"/,
    );
    await expect(
      skipGap(fx.journal, { consumer: "view", source: "orders/o1", by: " ", clock: fx.clock }),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("retries when the running consumer moves the checkpoint between its read and its guarded commit", async () => {
    const fx = setup();
    await gapOf2to3(fx);
    // The real journal, with the consumer applying version 2 just before the skip's first commit lands.
    let raced = false;
    const racing: Journal = Object.create(fx.journal, {
      commit: {
        value: async (commit: Commit) => {
          if (commit.checkpoint && !raced) {
            raced = true;
            await fx.consumer.handle(orderEvent("o1", 2));
          }
          return fx.journal.commit(commit);
        },
      },
    });
    const skipped = await skipGap(racing, { consumer: "view", source: "orders/o1", by: "ada", clock: fx.clock });
    expect(raced).toBe(true);
    // Read again: only version 3 is missing now, and the alert raised on 2.. is the consumer's to mark filled.
    expect(skipped).toMatchObject({ from: 3, to: 3, alertMarked: false });
    await fx.consumer.checkGaps();
    expect(await fx.versions()).toEqual([1, 2, 4, 5]);
    expect((await fx.consumer.listGapAlerts())[0]).toMatchObject({ status: "filled" });
  });

  it("Consumer.skipGap keeps its behaviour through the shared skip: recorded, then released", async () => {
    const fx = setup();
    await gapOf2to3(fx);
    expect(await fx.consumer.skipGap("orders/o1")).toEqual({ from: 2, to: 3 });
    expect(await fx.versions()).toEqual([1, 4, 5]);
    expect((await fx.consumer.listGapAlerts())[0]).toMatchObject({ status: "skipped", note: "versions 2..3 skipped" });
    expect(await fx.consumer.skipGap("orders/o1")).toBeUndefined();
  });
});

describe("gap tools: supplyGapEvent", () => {
  it("parks the event at its version; the consumer's gap check applies it and releases what follows", async () => {
    const fx = setup();
    await gapOf2to3(fx);
    const by = { consumer: "view", by: "ada", clock: fx.clock };
    await expect(supplyGapEvent(fx.journal, { ...by, envelope: orderEvent("o1", 3) })).resolves.toMatchObject({
      source: "orders/o1",
      version: 3,
      gap: { from: 2, to: 3 },
    });
    await fx.consumer.checkGaps();
    expect(await fx.versions()).toEqual([1]); // 2 is still missing
    expect((await listGaps(fx.journal))[0]).toMatchObject({
      firstMissing: 2,
      lastMissing: 2,
      parkedVersions: [3, 4, 5],
    });
    await supplyGapEvent(fx.journal, { ...by, envelope: orderEvent("o1", 2) });
    await fx.consumer.checkGaps();
    expect(await fx.versions()).toEqual([1, 2, 3, 4, 5]);
    expect(await fx.journal.getCheckpoint("view", "orders/o1")).toBe(5);
    expect(await fx.journal.getInbox("view", orderEvent("o1", 2).eventId)).toBeDefined();
    expect(await fx.journal.listParked("view")).toEqual([]);
    expect((await fx.consumer.listGapAlerts())[0]).toMatchObject({ status: "filled" });
  });

  it("refuses, naming what is wrong: not an envelope, no version, no gap, outside the gap, parked, handled", async () => {
    const fx = setup();
    await gapOf2to3(fx);
    const supply = (envelope: unknown) =>
      supplyGapEvent(fx.journal, { consumer: "view", by: "ada", clock: fx.clock, envelope });
    await expect(supply({ eventId: "x" })).rejects.toThrow(/not an integration event envelope: type: /);
    const { aggregateVersion: _v, ...unversioned } = orderEvent("o1", 2);
    await expect(supply(unversioned)).rejects.toThrow(/has no aggregateVersion/);
    await expect(supply(orderEvent("o2", 2))).rejects.toThrow(/no gap: consumer "view" has nothing parked/);
    await expect(supply(orderEvent("o1", 1))).rejects.toThrow(
      /version 1 of "orders\/o1", not a missing version of consumer "view" \(missing: 2..3; version 1 is taken: the checkpoint is 1\)/,
    );
    await expect(supply({ ...orderEvent("o1", 5), aggregateVersion: 6, eventId: "o1:6" })).rejects.toThrow(
      /missing: 2..3; nothing is parked past version 6/,
    );
    await expect(supply({ ...orderEvent("o1", 4), eventId: "other" })).rejects.toThrow(
      /already has a message parked at version 4 of "orders\/o1" \(missing: 2..3\)/,
    );
    await expect(supply({ ...orderEvent("o1", 1), aggregateVersion: 2 })).rejects.toThrow(
      /has handled event o1:OrderPlaced already/,
    );
    await expect(
      supplyGapEvent(fx.journal, { consumer: "view", by: "", clock: fx.clock, envelope: orderEvent("o1", 2) }),
    ).rejects.toThrow(/operator's name is required/);
    expect((await fx.journal.listParked("view")).map((p) => p.version)).toEqual([4, 5]);
  });
});
