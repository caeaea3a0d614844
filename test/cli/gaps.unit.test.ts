import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerGapCommands } from "../../src/cli/gaps.js";
import { createOncelyCli } from "../../src/cli/program.js";
import { listActions } from "../../src/console/audit.js";
import { sequentialIds } from "../../src/core/clock.js";
import { GAP_ALERTS } from "../../src/messaging/gaps.js";
import { viewWithGap } from "../messaging/support/gap-world.js";
import { orderEvent } from "../messaging/support/orders.js";

/** A running sequenced consumer with versions 2..3 of orders/o1 missing (4 and 5 parked, alerted on). */
async function world() {
  const { journal, clock, consumer } = await viewWithGap();
  const lines: string[] = [];
  const ids = sequentialIds("act");
  let stdin = "";
  return {
    journal,
    consumer,
    lines,
    text: () => lines.join(""),
    setStdin: (text: string) => {
      stdin = text;
    },
    versions: async () =>
      ((await journal.getDocument("timeline", "o1"))?.doc as { versions: number[] } | undefined)?.versions ?? [],
    async run(...args: string[]) {
      const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      registerGapCommands(program, async () => journal, {
        out: (t) => lines.push(t),
        stdin: async () => stdin,
        clock,
        ids,
      });
      await program.parseAsync(["node", "oncely", ...args]);
    },
  };
}

describe("`oncely gaps`", () => {
  it("is a command of the oncely CLI", () => {
    const gaps = createOncelyCli().program.commands.find((c) => c.name() === "gaps");
    expect(gaps?.commands.map((c) => c.name())).toEqual(["list", "skip", "supply"]);
  });

  it("lists a gap, and `skip` moves the checkpoint, marks the alert and records the operator", async () => {
    const w = await world();
    await w.run("gaps", "list");
    expect(w.text()).toContain(
      "view  orders/o1  checkpoint=1  missing=2..3  parked=4,5  waiting=5s  alert=open\n1 source(s) with parked messages",
    );
    w.lines.length = 0;
    await w.run("gaps", "list", "--consumer", "view", "--json");
    expect(JSON.parse(w.lines[0] as string)).toMatchObject({ source: "orders/o1", firstMissing: 2, lastMissing: 3 });

    await expect(w.run("gaps", "skip", "view", "orders/o1")).rejects.toThrow(/--by <operator> is required/);
    w.lines.length = 0;
    await w.run("gaps", "skip", "view", "orders/o1", "--by", "ada", "--note", "lost upstream");
    expect(w.text()).toContain("skipped 2..3 of orders/o1 for view; parked 4, 5 are applied");
    expect(await w.journal.getCheckpoint("view", "orders/o1")).toBe(3);
    expect((await w.journal.listDocuments(GAP_ALERTS))[0]?.doc).toMatchObject({
      status: "skipped",
      note: "versions 2..3 skipped by ada: lost upstream",
    });
    expect(await listActions(w.journal)).toEqual([
      expect.objectContaining({
        by: "ada",
        action: "skip-gap",
        target: "view|orders/o1",
        outcome: "skipped 2..3",
        note: "lost upstream",
        via: "cli",
      }),
    ]);
    await w.consumer.checkGaps();
    expect(await w.versions()).toEqual([1, 4, 5]);
    await expect(w.run("gaps", "skip", "view", "orders/o1", "--by", "ada")).rejects.toThrow(/no gap/);
    expect(await listActions(w.journal)).toHaveLength(1); // a refused action is not recorded
  });

  it("`supply` takes the envelope from a file or stdin; the consumer's gap check applies it", async () => {
    const w = await world();
    const dir = await mkdtemp(join(tmpdir(), "oncely-gaps-"));
    const file = join(dir, "v2.json");
    await writeFile(file, JSON.stringify(orderEvent("o1", 2)));
    await w.run("gaps", "supply", "view", "--event", file, "--by", "ada", "--note", "from the producer's API");
    expect(w.text()).toContain(
      "supplied o1:PaymentProcessed as version 2 of orders/o1 for view (gap 2..3); the consumer applies it at its next gap check",
    );
    w.setStdin(JSON.stringify(orderEvent("o1", 3)));
    await w.run("gaps", "supply", "view", "--event", "-", "--by", "bob");
    await w.consumer.checkGaps();
    expect(await w.versions()).toEqual([1, 2, 3, 4, 5]);
    expect((await listActions(w.journal)).map((a) => [a.by, a.action, a.target, a.outcome, a.via])).toEqual([
      ["bob", "supply-gap", "view|orders/o1@3", "parked o1:ShippingReady", "cli"],
      ["ada", "supply-gap", "view|orders/o1@2", "parked o1:PaymentProcessed", "cli"],
    ]);

    w.setStdin("{not json");
    await expect(w.run("gaps", "supply", "view", "--event", "-", "--by", "ada")).rejects.toThrow(
      /--event: stdin is not JSON/,
    );
    await expect(w.run("gaps", "supply", "view", "--event", join(dir, "none.json"), "--by", "ada")).rejects.toThrow(
      /--event: cannot read .*none\.json/,
    );
    await expect(w.run("gaps", "supply", "view", "--event", file, "--by", "ada")).rejects.toThrow(
      /no gap: consumer "view" has nothing parked for source "orders\/o1"/,
    );
  });
});
