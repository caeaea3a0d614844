import { createRequire } from "node:module";
import { OncelyError } from "../base/errors.js";

/** The database and broker clients oncely's back ends use; optional peer dependencies of the package. */
export type DriverName = "pg" | "better-sqlite3" | "@nats-io/jetstream" | "@nats-io/transport-node" | "fastify";

/** A back end was imported without the client package it runs on: install it. Never retryable. */
export class MissingDriverError extends OncelyError {
  readonly retryable = false;
  constructor(
    readonly driver: string,
    readonly neededBy: string,
    options?: { cause?: unknown },
  ) {
    super(`${neededBy} needs the package "${driver}", which is not installed: npm install ${driver}`, options);
  }
}

// Resolved from oncely's own location, as a static import would be: the peer dependency installed
// next to oncely in the application's node_modules.
const require = createRequire(import.meta.url);

/**
 * Load a driver when the back end that needs it is imported. The drivers are optional peers, so a
 * missing one must name itself and the command that installs it instead of failing the import with
 * a bare module-not-found. Only the driver's own absence is translated; an error inside the driver
 * (or a missing dependency of it) is rethrown as it is.
 *
 * @example
 * import type pg from "pg";
 * const Pg: typeof pg = requireDriver("pg", "oncely/postgres");
 */
export function requireDriver<T>(driver: DriverName | (string & {}), neededBy: string): T {
  try {
    return require(driver) as T;
  } catch (error) {
    if (isNotFound(error, driver)) throw new MissingDriverError(driver, neededBy, { cause: error });
    throw error;
  }
}

function isNotFound(error: unknown, driver: string): boolean {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== "MODULE_NOT_FOUND") return false;
  return error.message.includes(`'${driver}'`);
}
