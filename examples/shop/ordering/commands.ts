import { InvalidInputError } from "oncely";
import { z } from "zod";
import { type CancelOrder, cancelOrderSchema } from "./cancellation.js";
import type { IntegrationCommand } from "./integration.js";

/**
 * Commands an order accepts. `PlaceOrder` and `CancelOrder` (`cancellation.ts`) come from the shop's API; the `Record…` commands from
 * the Ordering consumer of integration events (`./integration.ts`); effect outcomes
 * (`oncely.effect.*`) of the two mails from the dispatcher. `parseCommand` validates what arrives
 * from outside (HTTP), naming each bad field.
 */

const lineSchema = z.strictObject({
  sku: z.string().trim().min(1, "must not be empty"),
  quantity: z.number().int("must be a whole number").positive("must be at least 1"),
  unitPrice: z
    .number()
    .int("must be an integer in minor units (cents)")
    .nonnegative("must not be negative")
    .max(Number.MAX_SAFE_INTEGER),
});

export const placeOrderSchema = z
  .strictObject({
    type: z.literal("PlaceOrder"),
    customerEmail: z.email("must be an email address"),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/, "must be a 3-letter ISO 4217 code")
      .transform((c) => c.toUpperCase()),
    lines: z.array(lineSchema).min(1, "must hold at least one line"),
  })
  .superRefine((command, ctx) => {
    const amount = orderAmount(command.lines);
    if (!Number.isSafeInteger(amount)) {
      ctx.addIssue({ code: "custom", path: ["amount"], message: "order total is too large" });
    } else if (amount <= 0) {
      ctx.addIssue({ code: "custom", path: ["amount"], message: "order total must be positive" });
    }
  });
export type PlaceOrder = z.infer<typeof placeOrderSchema>;

export type OrderCommand = PlaceOrder | CancelOrder | IntegrationCommand;

const commandSchema = z.discriminatedUnion("type", [placeOrderSchema, cancelOrderSchema], {
  error: (issue) => (issue.code === "invalid_union" ? "must be PlaceOrder or CancelOrder" : undefined),
});

/** Sum of quantity × unitPrice, in minor units. */
export function orderAmount(lines: readonly { quantity: number; unitPrice: number }[]): number {
  return lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
}

/** Validates a command from outside. Throws `InvalidInputError` whose issues name each field. */
export function parseOrderCommand(input: unknown): OrderCommand {
  const result = commandSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map(
    (issue) => `${issue.path.length ? issue.path.join(".") : "command"}: ${issue.message}`,
  );
  throw new InvalidInputError("invalid order command", issues);
}
