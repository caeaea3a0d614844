import { NotMigratedError, OncelyError, StorageUnavailableError, TerminalStorageError } from "../base/errors.js";

/** Error codes that mean the connection (not the statement) failed: a retry on a new connection can work. */
const CONNECTION_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01", // admin_shutdown (pg_terminate_backend, server restart)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
]);

const CONNECTION_MESSAGES =
  /connection terminated|connection error|timeout exceeded when trying to connect|not queryable|server closed the connection/i;

export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown; errors?: unknown } | null;
  if (!e || typeof e !== "object") return false;
  if (typeof e.code === "string" && (CONNECTION_CODES.has(e.code) || e.code.startsWith("08"))) return true;
  if (typeof e.message === "string" && CONNECTION_MESSAGES.test(e.message)) return true;
  // net.connect with several addresses (IPv4 and IPv6) fails with an AggregateError.
  return Array.isArray(e.errors) && e.errors.some(isConnectionError);
}

/**
 * SQLSTATE classes no retry can fix: the statement's data itself is refused. Class 22 (data
 * exception: 22021 invalid byte sequence, 22P05 untranslatable character, 22003 numeric value out
 * of range, 22P02 invalid text representation, 22032 invalid JSON text...) and 54 (program limit
 * exceeded: a value too large for an index row). Retrying sends the same data and fails the same way.
 */
export function isTerminalDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^(22|54)[0-9A-Z]{3}$/.test(code);
}

/**
 * Data errors no retry can fix become `TerminalStorageError` (a consumer dead-letters the message
 * at once instead of retrying it). Connection-level failures become `StorageUnavailableError` (retryable), with the driver's error
 * as cause. When it happens during a commit, the commit may or may not have landed.
 */
export function mapPgError(error: unknown): unknown {
  if (error instanceof OncelyError) return error;
  // undefined_table, undefined_function (oncely_commit), invalid_schema_name: migrate() never ran here.
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "42P01" || code === "42883" || code === "3F000") {
    return new NotMigratedError("PostgreSQL", String((error as { message?: unknown }).message), { cause: error });
  }
  if (isTerminalDataError(error)) {
    const e = error as { code: string; message?: unknown };
    return new TerminalStorageError(`PostgreSQL refused the data (${e.code}): ${String(e.message)}`, { cause: error });
  }
  if (isConnectionError(error)) {
    const message =
      error instanceof Error && error.message ? error.message : String((error as { code?: unknown }).code);
    return new StorageUnavailableError(`PostgreSQL unavailable: ${message}`, { cause: error });
  }
  return error;
}
