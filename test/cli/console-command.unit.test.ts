import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { type RunningConsole, registerConsoleCommand } from "../../src/cli/console.js";
import { memoryJournal } from "../../src/journal/memory.js";

const TOKEN = "cli-console-token-0123456789";

function cli(until: (running: RunningConsole) => Promise<void> = async () => {}) {
  const journal = memoryJournal();
  const urls: string[] = [];
  const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerConsoleCommand(program, async () => journal, { started: (r) => urls.push(r.url), until });
  return { journal, urls, run: (...args: string[]) => program.parseAsync(["node", "oncely", "console", ...args]) };
}

describe("oncely console", () => {
  it("serves the console over the journal, behind the token, until told to stop", async () => {
    const answers: Record<string, number> = {};
    const c = cli(async ({ url }) => {
      answers.shell = (await fetch(`${url}/effects`)).status;
      answers.anonymous = (await fetch(`${url}/api/view/effects`)).status;
      answers.signed = (
        await fetch(`${url}/api/view/effects`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).status;
      const root = await fetch(url.replace(/\/console$/, "/"), { redirect: "manual" });
      answers.root = root.status;
    });
    await c.run("--port", "0", "--token", TOKEN, "--consumer", "order-timeline");
    expect(c.urls).toHaveLength(1);
    expect(c.urls[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console$/);
    expect(answers).toEqual({ shell: 200, anonymous: 401, signed: 200, root: 302 });
    // Stopped: nothing listens any more.
    await expect(fetch(`${c.urls[0]}/effects`)).rejects.toThrow();
  });

  it("refuses bad options naming each one, before listening", async () => {
    await expect(cli().run("--port", "http", "--token", TOKEN)).rejects.toThrow(/--port/);
    await expect(cli().run("--port", "70000", "--token", TOKEN)).rejects.toThrow(/--port must be 0-65535/);
    await expect(cli().run("--port", "0", "--token", "short")).rejects.toThrow(/token must be 16-256/);
    const previous = process.env.ONCELY_ADMIN_TOKEN;
    delete process.env.ONCELY_ADMIN_TOKEN;
    try {
      await expect(cli().run("--port", "0")).rejects.toThrow(/--token/);
    } finally {
      if (previous !== undefined) process.env.ONCELY_ADMIN_TOKEN = previous;
    }
  });
});
