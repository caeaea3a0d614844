import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerDeadLetterCommands } from "../../src/cli/dead-letters.js";
import { OPERATOR_ACTIONS } from "../../src/console/audit.js";
import { InvalidInputError, type Journal } from "../../src/index.js";
import { memoryJournal, SimulatedClock, sequentialIds } from "../../src/testing/index.js";

// `oncely dead-letters discard|replay` with a filter instead of an id: a dry-run count first, then
// the action on that count, one operator action recorded per letter.

async function world() {
  const journal = memoryJournal();
  const clock = new SimulatedClock();
  const t = clock.now();
  const letter = (id: string, consumer: string, error: string, at: number) => ({
    id,
    consumer,
    messageId: null,
    payload: {},
    error,
    stack: null,
    attempts: 5,
    firstFailedAt: at,
    lastFailedAt: at,
  });
  await journal.commit({
    deadLetters: [
      letter("d1", "billing", "unknown-key ordering-2", t - 3 * 3_600_000),
      letter("d2", "billing", "unknown-key ordering-2", t - 1_000),
      letter("d3", "billing", "timeout", t - 1_000),
      letter("d4", "shipping", "unknown-key ordering-2", t),
    ],
    now: t,
  });
  const lines: string[] = [];
  const run = (...args: string[]) => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerDeadLetterCommands(program, async () => journal as Journal, {
      out: (text) => lines.push(text),
      clock,
      ids: sequentialIds("a"),
    });
    return program.parseAsync(["node", "oncely", "dead-letters", ...args]);
  };
  return { journal, lines, run };
}

describe("oncely dead-letters with a filter", () => {
  it("counts first (--dry-run), refuses to act without that count or on a moved one, then discards each match", async () => {
    const w = await world();
    const filter = ["--consumer", "billing", "--error-contains", "unknown-key", "--since", "2h"];
    await w.run("discard", ...filter, "--dry-run");
    expect(w.lines.join("")).toBe("1 open dead letter(s) match; discard them with --expect 1\n");
    await expect(w.run("discard", ...filter, "--by", "ada")).rejects.toBeInstanceOf(InvalidInputError);
    await expect(w.run("discard", ...filter, "--by", "ada", "--expect", "2")).rejects.toThrow(
      "1 open dead letter(s) match now, not 2",
    );
    expect((await w.journal.getDeadLetter("d2"))?.status).toBe("open");
    w.lines.length = 0;
    await w.run("discard", ...filter, "--by", "ada", "--note", "fixed the keyring", "--expect", "1");
    expect(w.lines.join("")).toBe("d2: discarded\ndiscarded 1 of 1 matching dead letter(s)\n");
    expect((await w.journal.getDeadLetter("d2"))?.status).toBe("discarded");
    for (const id of ["d1", "d3", "d4"]) expect((await w.journal.getDeadLetter(id))?.status).toBe("open");
    const actions = (await w.journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc);
    expect(actions).toEqual([
      expect.objectContaining({ action: "discard", target: "d2", by: "ada", note: "fixed the keyring", via: "cli" }),
    ]);
  });

  it("refuses an id and a filter together, a filter-less bulk, and a time it cannot read", async () => {
    const w = await world();
    await expect(w.run("discard", "d1", "--consumer", "billing")).rejects.toThrow("not both");
    await expect(w.run("discard", "--dry-run")).rejects.toThrow("--consumer, --error-contains");
    await expect(w.run("discard", "--since", "yesterday", "--dry-run")).rejects.toThrow('--since "yesterday"');
    await expect(w.run("replay", "--consumer", "billing", "--expect", "3")).rejects.toThrow("needs the consumers");
  });
});
