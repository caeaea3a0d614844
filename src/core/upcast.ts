import { RetryableError, TerminalError } from "../base/errors.js";

/**
 * Schema evolution of stored facts. Events (and integration-event payloads, and effect inputs)
 * are written once and never rewritten: code that changes their shape declares, per type, its
 * current version and one step per older version, `upcast[n]` turning version n into n + 1.
 * Reading applies the chain from the stored version up to the current one.
 *
 * Two ways to fail, told apart because they call for different handling:
 * - `UpcastError`: an older version with no path (a missing step). The same code never reads it:
 *   terminal, and it names what is missing.
 * - `VersionTooNewError`: a version newer than this code knows (a v1 worker reading what a v2
 *   worker wrote during a rolling upgrade). Retryable: a newer worker can read it, so whatever
 *   asked (a command, an outcome, a message) must be left for it, never decided on here.
 */

/** One step: the value at version n (the key) becomes the value at version n + 1. */
// biome-ignore lint/suspicious/noExplicitAny: each step takes the shape of its own older version
export type UpcastStep = (old: any) => unknown;

export interface SchemaOf {
  /** Current version, written with every new value of this type (default 1). */
  version: number;
  /** `upcast[n]` turns version n into version n + 1; needed for every n from the oldest stored up. */
  upcast?: Readonly<Record<number, UpcastStep>>;
}

/** Schemas by type (event type, integration event type, effect kind). */
export type Schemas = Readonly<Record<string, SchemaOf>>;

/** A stored value at a version this code has no path from. Terminal for this code. */
export class UpcastError extends TerminalError {
  constructor(
    /** What was being read: `actor order/42`, `consumer billing`, `effect payment`. */
    readonly reader: string,
    readonly type: string,
    readonly fromVersion: number,
    readonly toVersion: number,
    detail: string,
  ) {
    super(`${reader}: cannot read ${type} at version ${fromVersion} as version ${toVersion}: ${detail}`);
  }
}

/** A stored value written by newer code than this. Leave it to a newer worker. */
export class VersionTooNewError extends RetryableError {
  constructor(
    readonly reader: string,
    readonly type: string,
    readonly storedVersion: number,
    readonly knownVersion: number | undefined,
  ) {
    super(
      knownVersion === undefined
        ? `${reader}: ${type} (version ${storedVersion}) is a type this code does not know; it was written by newer code, leaving it to a newer worker`
        : `${reader}: ${type} is at version ${storedVersion}, this code knows up to version ${knownVersion}; leaving it to a newer worker`,
    );
  }
}

/**
 * The version a new value of `type` is written at. `closed`: the schemas list every type (an
 * actor's events), so an unlisted one is a mistake, refused before it is stored unreadably.
 */
export function currentVersion(owner: string, schemas: Schemas | undefined, type: string, closed = false): number {
  const schema = schemas?.[type];
  if (!schema && schemas && closed) {
    throw new TerminalError(`${owner}: event type ${type} is not among the declared events; declare its schema`);
  }
  return schema?.version ?? 1;
}

/**
 * Read `value` of `type`, stored at `stored`, as the current version. When `schemas` is given
 * and `closed`, a type it does not list counts as written by newer code (an actor that declares
 * its events declares all of them, so a new event type of a later release is never misread as
 * "nothing happened").
 */
export function upcast<T>(
  reader: string,
  schemas: Schemas | undefined,
  type: string,
  stored: number,
  value: T,
  options: { closed?: boolean } = {},
): T {
  const schema = schemas?.[type];
  if (!schema && schemas && options.closed) throw new VersionTooNewError(reader, type, stored, undefined);
  const target = schema?.version ?? 1;
  if (stored === target) return value;
  if (!Number.isInteger(stored) || stored < 1) {
    throw new UpcastError(reader, type, stored, target, "a stored version is an integer from 1");
  }
  if (stored > target) throw new VersionTooNewError(reader, type, stored, target);
  let current: unknown = value;
  for (let from = stored; from < target; from++) {
    const step = schema?.upcast?.[from];
    if (!step) throw new UpcastError(reader, type, stored, target, `no upcaster from version ${from}`);
    try {
      current = step(current);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new UpcastError(reader, type, stored, target, `upcaster from version ${from} threw: ${reason}`);
    }
  }
  return current as T;
}

/** Checks a schemas declaration once, where it is given, so a typo fails at start and not at read. */
export function checkSchemas(owner: string, schemas: Schemas | undefined): void {
  for (const [type, schema] of Object.entries(schemas ?? {})) {
    if (!Number.isInteger(schema.version) || schema.version < 1) {
      throw new TerminalError(
        `${owner}: schema of ${type} has version ${schema.version}; versions are integers from 1`,
      );
    }
    for (const key of Object.keys(schema.upcast ?? {})) {
      const from = Number(key);
      if (!Number.isInteger(from) || from < 1 || from >= schema.version) {
        throw new TerminalError(
          `${owner}: ${type} declares an upcaster from version ${key}; steps go from 1 up to ${schema.version - 1}`,
        );
      }
    }
  }
}
