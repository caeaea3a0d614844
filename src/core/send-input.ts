import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";

/**
 * What `Runtime.send` accepts, checked before anything runs, so that a caller's mistake (`{}` or
 * `null` for a command, a misspelt option) is refused naming the field rather than surfacing as a
 * TypeError from inside the runtime, or as an option silently ignored (a `messageID` that
 * deduplicates nothing).
 */
const sendOptions = z.strictObject({
  messageId: z.string().min(1).optional(),
  causationId: z.string().optional(),
  correlationId: z.string().optional(),
  expectNew: z.boolean().optional(),
  deliveringRow: z.string().min(1).optional(),
});
const sendInput = z.object({
  address: z.string(),
  command: z.looseObject({ type: z.string().min(1) }),
  options: sendOptions.optional(),
});
const knownOptions = `known options: ${Object.keys(sendOptions.shape).join(", ")}`;

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
const isText = (v: unknown, min: number) => v === undefined || (typeof v === "string" && v.length >= min);
const OPTION_CHECKS = new Map<string, (v: unknown) => boolean>([
  ["messageId", (v) => isText(v, 1)],
  ["causationId", (v) => isText(v, 0)],
  ["correlationId", (v) => isText(v, 0)],
  ["expectNew", (v) => v === undefined || typeof v === "boolean"],
  ["deliveringRow", (v) => isText(v, 1)],
]);

/**
 * What every send the runtime's own callers make looks like (a plain command, plain options),
 * accepted without the schema: only what the schema accepts passes here, anything else is left to
 * it. The schema is the slower check on a path every command takes (measured on the order workflow,
 * where sends are most of the commands).
 */
function plainlyValid(address: unknown, command: unknown, options: unknown): boolean {
  if (typeof address !== "string" || !isPlain(command)) return false;
  if (typeof command.type !== "string" || command.type.length === 0) return false;
  if (options === undefined) return true;
  if (!isPlain(options)) return false;
  for (const key in options) {
    const check = OPTION_CHECKS.get(key);
    if (check === undefined || !Object.hasOwn(options, key) || !check(options[key])) return false;
  }
  return true;
}

/** Throws `InvalidInputError` naming every field of a `send` that is not what it must be. */
export function checkSendInput(address: unknown, command: unknown, options: unknown): void {
  if (plainlyValid(address, command, options)) return;
  const checked = sendInput.safeParse({ address, command, options });
  if (checked.success) return;
  const to = typeof address === "string" ? ` to "${address}"` : "";
  throw new InvalidInputError(
    `invalid send${to}`,
    checked.error.issues.map(
      (issue) =>
        `${issue.path.join(".")}: ${issue.message}${issue.code === "unrecognized_keys" ? ` (${knownOptions})` : ""}`,
    ),
  );
}
