import { pino } from "pino";
import { InvalidInputError } from "../base/errors.js";

/** The logging surface oncely uses; a pino logger satisfies it. Default: `defaultLogger()`. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const nothing = () => {};
/** Logs nothing: pass it as `logger` to silence a component on purpose. */
export const silentLogger: Logger = { debug: nothing, info: nothing, warn: nothing, error: nothing };

/** The environment variable that sets the default logger's level. */
export const LOG_LEVEL_VARIABLE = "ONCELY_LOG_LEVEL";
const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
type Level = (typeof LEVELS)[number];

/** The default logger's level: `ONCELY_LOG_LEVEL` when set, else `warn`; any other value is an error naming it. */
export function defaultLogLevel(env: NodeJS.ProcessEnv = process.env): Level {
  const raw = env[LOG_LEVEL_VARIABLE];
  if (raw === undefined || raw === "") return "warn";
  const level = raw.trim().toLowerCase();
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new InvalidInputError(`${LOG_LEVEL_VARIABLE} must be one of ${LEVELS.join(", ")}, got "${raw}"`);
  }
  return level as Level;
}

let shared: Logger | undefined;

/**
 * The logger of every component built without one: pino, JSON lines on stderr, at `warn` (or
 * `ONCELY_LOG_LEVEL`, read when it is first needed). Stalls, escalations and unserved effect kinds
 * are warnings, so they are seen without any setup; silencing is explicit (`silentLogger`, or
 * `ONCELY_LOG_LEVEL=silent`). Synchronous writes: a warning logged just before the process exits
 * is not lost in a buffer. One instance per process, created on first use.
 */
export function defaultLogger(): Logger {
  shared ??= pino({ name: "oncely", level: defaultLogLevel() }, pino.destination({ dest: 2, sync: true }));
  return shared;
}

/** The logger a component uses: the one it was given, else the default. The one place that default is chosen. */
export const resolveLogger = (logger: Logger | undefined): Logger => logger ?? defaultLogger();
