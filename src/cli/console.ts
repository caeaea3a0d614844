import type { Command } from "commander";
import type fastifyModule from "fastify";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { CONSOLE_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import type { ConsoleOptions } from "../console/options.js";
import { consolePlugin } from "../console/plugin.js";
import { requireDriver } from "../core/require-driver.js";
import type { Journal } from "../journal/types.js";
import { DeadLetters } from "../messaging/dead-letters.js";
import type { CliConsumers } from "./dead-letters.js";

const consoleOptions = z.strictObject({
  port: z.coerce.number<string>().int().min(0).max(65_535, "--port must be 0-65535"),
  host: z.string().min(1),
  token: z.string({ error: "--token <token> (or ONCELY_ADMIN_TOKEN) is required" }).min(1, "--token must not be empty"),
  consumer: z.array(z.string().min(1)).default([]),
});

/** What `oncely console` started: the tests read its URL and close it. */
export interface RunningConsole {
  url: string;
  app: FastifyInstance;
}

/**
 * Serve the operator console over `journal` on host:port. Loads fastify (an optional peer
 * dependency) only here, so the rest of the CLI never needs it.
 */
export async function serveConsole(
  journal: Journal,
  options: { host: string; port: number } & Omit<ConsoleOptions, "journal">,
): Promise<RunningConsole> {
  const Fastify = requireDriver<typeof fastifyModule>("fastify", "oncely console");
  const app = Fastify({ logger: false, bodyLimit: 256 * 1024, forceCloseConnections: true });
  const { host, port, ...rest } = options;
  await app.register(consolePlugin, { ...rest, journal, prefix: CONSOLE_DEFAULTS.prefix });
  app.get("/", async (_request, reply) => reply.redirect(`${CONSOLE_DEFAULTS.prefix}/effects`));
  await app.listen({ host, port });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("console: no TCP address");
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}${CONSOLE_DEFAULTS.prefix}`, app };
}

/**
 * `oncely console`: the web console over the journal `--db` names. It lists, shows, settles and
 * discards; replaying a dead letter needs the application's consumers: given `consumers` (a CLI
 * of the application's own, `runOncelyCli({ consumers })`) it replays through them, and without
 * them it answers replay with 409.
 */
export interface ConsoleCommandHooks {
  /** The application's consumers over the opened journal, for replay. */
  consumers?: CliConsumers | undefined;
  /** Told where the console listens (default: printed). */
  started?: (running: RunningConsole) => void;
  /** Resolves when the console is to stop (default: SIGINT or SIGTERM); tests pass their own. */
  until?: (running: RunningConsole) => Promise<void>;
}

const untilSignal = () =>
  new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });

export function registerConsoleCommand(
  program: Command,
  openJournal: () => Promise<Journal>,
  hooks: ConsoleCommandHooks = {},
): void {
  const started =
    hooks.started ??
    ((running: RunningConsole) =>
      void process.stdout.write(`oncely console on ${running.url} (sign in with the token)\n`));
  const until = hooks.until ?? untilSignal;
  program
    .command("console")
    .description("serve the operator web console over the journal (bearer token required)")
    .option("--port <port>", "TCP port (0 picks a free one)", "4000")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option(
      "--token <token>",
      "the bearer token operators sign in with (default ONCELY_ADMIN_TOKEN)",
      process.env.ONCELY_ADMIN_TOKEN,
    )
    .option(
      "--consumer <name>",
      "a consumer whose parked messages to list (repeatable; those named by gap alerts and dead letters are listed anyway)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action(async (raw: Record<string, unknown>) => {
      const parsed = consoleOptions.safeParse(raw);
      if (!parsed.success) {
        throw new InvalidInputError(
          "cannot start the console",
          parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`),
        );
      }
      const { host, port, token, consumer } = parsed.data;
      const journal = await openJournal();
      const deadLetters = hooks.consumers
        ? new DeadLetters(journal, { consumers: [...(await hooks.consumers(journal))] })
        : undefined;
      const running = await serveConsole(journal, {
        host,
        port,
        token,
        consumers: consumer,
        ...(deadLetters ? { deadLetters } : {}),
      });
      try {
        started(running);
        await until(running);
      } finally {
        // Close the server before the journal closes.
        await running.app.close();
      }
    });
}
