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

/** Throws `InvalidInputError` naming every field of a `send` that is not what it must be. */
export function checkSendInput(address: unknown, command: unknown, options: unknown): void {
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
