import { Command } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { registerDeadLetterCommands } from "../../src/cli/dead-letters.js";
import { memoryJournal } from "../../src/journal/memory.js";

async function journalWithLetter() {
  const journal = memoryJournal();
  await journal.commit({
    deadLetters: [
      {
        id: "view|e1",
        consumer: "view",
        messageId: "e1",
        payload: { subject: "shop.x.Y", body: "{}", envelope: null },
        error: "boom",
        stack: "Error: boom",
        attempts: 5,
        firstFailedAt: 1000,
        lastFailedAt: 2000,
      },
    ],
    now: 2000,
  });
  return journal;
}

async function run(
  args: string[],
  journal: Awaited<ReturnType<typeof journalWithLetter>>,
  replay?: (id: string) => Promise<{ outcome: string; released: number }>,
) {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const program = new Command().exitOverride();
    registerDeadLetterCommands(program, async () => journal, replay);
    await program.parseAsync(["node", "oncely", ...args]);
  } finally {
    spy.mockRestore();
  }
  return out.join("");
}

describe("dead-letters CLI", () => {
  afterEach(() => vi.restoreAllMocks());

  it("lists, shows and discards", async () => {
    const journal = await journalWithLetter();
    expect(await run(["dead-letters", "list"], journal)).toMatch(
      /view\|e1\s+open\s+view\s+attempts=5 .* boom\n1 dead letter/,
    );
    expect(JSON.parse(await run(["dead-letters", "show", "view|e1"], journal))).toMatchObject({
      error: "boom",
      attempts: 5,
    });
    expect(await run(["dead-letters", "discard", "view|e1"], journal)).toBe("discarded view|e1\n");
    expect(await run(["dead-letters", "list"], journal)).toBe("0 dead letter(s)\n");
    expect(await run(["dead-letters", "list", "--status", "discarded", "--json"], journal)).toMatch(
      /"status":"discarded"/,
    );
    await expect(run(["dead-letters", "discard", "view|e1"], journal)).rejects.toThrow(/no open dead letter/);
    await expect(run(["dead-letters", "list", "--status", "weird"], journal)).rejects.toThrow(/--status/);
  });

  it("replays through the function the application supplies, and explains when there is none", async () => {
    const journal = await journalWithLetter();
    await expect(run(["dead-letters", "replay", "view|e1"], journal)).rejects.toThrow(/needs the consumers/);
    const replayed: string[] = [];
    const out = await run(["dead-letters", "replay", "view|e1"], journal, async (id) => {
      replayed.push(id);
      return { outcome: "applied", released: 2 };
    });
    expect(replayed).toEqual(["view|e1"]);
    expect(out).toBe("replayed view|e1: applied, released 2\n");
  });
});
