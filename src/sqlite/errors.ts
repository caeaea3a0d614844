import { NotMigratedError, StorageUnavailableError, TerminalStorageError } from "../base/errors.js";

/**
 * SQLITE_BUSY / SQLITE_LOCKED after the busy timeout and I/O errors can succeed later: they become
 * `StorageUnavailableError`; SQLITE_TOOBIG / SQLITE_MISMATCH become `TerminalStorageError`.
 * Everything else (a typed oncely error, a TypeError from JSON encoding,
 * use after `close()`, a programming error) passes through unchanged.
 */
export function mapSqliteError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = (error as { message?: unknown } | null)?.message;
  if (code === "SQLITE_ERROR" && typeof message === "string" && message.startsWith("no such table")) {
    return new NotMigratedError("SQLite", message, { cause: error });
  }
  // A value too big for the store, or of a type a column refuses: retrying sends the same value.
  if (typeof code === "string" && /^SQLITE_(TOOBIG|MISMATCH)/.test(code)) {
    return new TerminalStorageError(`SQLite refused the data: ${(error as Error).message}`, { cause: error });
  }
  if (typeof code === "string" && /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL)/.test(code)) {
    return new StorageUnavailableError(`SQLite unavailable: ${(error as Error).message}`, { cause: error });
  }
  return error;
}

export function isUniqueViolation(error: unknown, table: string, column: string): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === "SQLITE_CONSTRAINT_UNIQUE" && typeof e.message === "string" && e.message.includes(`${table}.${column}`)
  );
}
