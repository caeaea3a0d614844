import type { z } from "zod";
import { InvalidInputError } from "../base/errors.js";

/** Issues as `field: message`, the field named by its path (`body` for the whole). */
export const issuesOf = (error: z.ZodError): string[] =>
  error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);

/** A query string parsed by `schema`, or `InvalidInputError` (400) naming each bad parameter. */
export function parseQuery<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new InvalidInputError("invalid query", issuesOf(parsed.error));
  return parsed.data;
}

/** A request body parsed by `schema`, or `InvalidInputError` (400) naming each bad field. */
export function parseBody<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new InvalidInputError(`invalid ${what}`, issuesOf(parsed.error));
  return parsed.data;
}
