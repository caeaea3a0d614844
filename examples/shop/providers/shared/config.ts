import { parseArgs } from "node:util";
import { z } from "zod";

/**
 * Configuration of a provider process from flags (`--fail-rate 0.2`) and environment
 * (`PAYMENT_FAIL_RATE=0.2`); flags win. Every value is validated, and a bad one is reported by the
 * name the operator typed, so a typo never silently becomes a default.
 */

/** `payment` + `failRate` → `PAYMENT_FAIL_RATE`: prefixed, so three providers can share one environment. */
const toEnvName = (provider: string, field: string) => `${provider}_${field.replace(/([A-Z])/g, "_$1")}`.toUpperCase();
const toFlagName = (field: string) => field.replace(/([A-Z])/g, "-$1").toLowerCase();

export const number = () => z.coerce.number<string>();
export const boolean = () =>
  z
    .enum(["true", "false", "1", "0"], { message: "must be true, false, 1 or 0" })
    .transform((v) => v === "true" || v === "1");

export const commonConfigShape = {
  port: number().pipe(z.number().int().min(0).max(65535)).default(0),
  host: z.string().min(1).default("127.0.0.1"),
  seed: number().pipe(z.number().int()).default(1),
  ledgerPath: z.string().min(1).optional(),
};

export class ConfigError extends Error {
  constructor(
    readonly provider: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration for the ${provider} provider:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Builds the raw input for `schema` from argv and env, parses it, and names bad fields by flag and variable. */
export function loadConfig<T extends z.ZodRawShape>(
  provider: string,
  shape: T,
  argv: string[],
  env: Record<string, string | undefined>,
): z.infer<z.ZodObject<T>> {
  const fields = Object.keys(shape);
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: Object.fromEntries(fields.map((f) => [toFlagName(f), { type: "string" as const }])),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ConfigError(provider, [error instanceof Error ? error.message : String(error)]);
  }
  const raw: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[toFlagName(field)] ?? env[toEnvName(provider, field)];
    if (value !== undefined) raw[field] = value;
  }
  const result = z.strictObject(shape).safeParse(raw);
  if (!result.success) {
    throw new ConfigError(
      provider,
      result.error.issues.map((issue) => {
        const field = String(issue.path[0] ?? "");
        return `${field} (--${toFlagName(field)} / ${toEnvName(provider, field)}): ${issue.message}`;
      }),
    );
  }
  return result.data;
}

/** What each setting of a provider does, for `--help`: every field of its shape must be described. */
export type SettingHelp<T extends z.ZodRawShape> = { [K in keyof T]: string };

export const commonSettingHelp: SettingHelp<typeof commonConfigShape> = {
  port: "TCP port to listen on (0, the default, picks a free one)",
  host: "address to listen on (default 127.0.0.1)",
  seed: "seed of the fault draws: the same seed and requests give the same faults (default 1)",
  ledgerPath: "append the ledger to this JSON-lines file (default: kept in memory only)",
};

/** The `--help` text: every flag with its environment twin and what it does. */
export function usage<T extends z.ZodRawShape>(
  provider: string,
  summary: string,
  shape: T,
  help: SettingHelp<T>,
): string {
  const rows = Object.keys(shape).map((field) => [
    `--${toFlagName(field)} <value>`,
    toEnvName(provider, field),
    help[field as keyof T],
  ]);
  const flagWidth = Math.max(...rows.map(([flag]) => flag?.length ?? 0));
  const envWidth = Math.max(...rows.map(([, env]) => env?.length ?? 0));
  return [
    `Usage: tsx examples/shop/providers/${provider}/main.ts [options]`,
    "",
    summary,
    "Prints one JSON line {provider, url, pid} once it listens; stops on SIGINT or SIGTERM.",
    "Every option may be given by its environment variable instead; the flag wins.",
    "",
    "Options:",
    ...rows.map(([flag, env, text]) => `  ${flag?.padEnd(flagWidth)}  ${env?.padEnd(envWidth)}  ${text}`),
    `  ${"--help".padEnd(flagWidth)}  ${"".padEnd(envWidth)}  print this and exit`,
    "",
  ].join("\n");
}

/** `--help` or `-h` anywhere in argv: print the usage and exit 0, before any flag is validated. */
export function exitWithUsageIfAsked(argv: readonly string[], text: () => string): void {
  if (!argv.some((arg) => arg === "--help" || arg === "-h")) return;
  process.stdout.write(text());
  process.exit(0);
}

/** Runs a provider as a process: prints one JSON line with its URL, closes on SIGINT/SIGTERM. */
export async function runProcess(
  provider: string,
  start: () => Promise<{ url: string; close(): Promise<void> }>,
): Promise<void> {
  let server: { url: string; close(): Promise<void> };
  try {
    server = await start();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  // One machine-readable line: a parent process (demo, tests) waits for it to learn the port.
  process.stdout.write(`${JSON.stringify({ provider, url: server.url, pid: process.pid })}\n`);
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
