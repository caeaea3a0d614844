import { defineEffect } from "oncely";
import { z } from "zod";
import {
  EFFECT_KINDS,
  type EmailInput,
  type EmailResult,
  type PaymentInput,
  type PaymentResult,
  type PicklistCancelInput,
  type PicklistCancelResult,
  type PicklistInput,
  type PicklistResult,
  type RefundInput,
  type RefundResult,
  type ShipmentCheckInput,
  type ShipmentCheckResult,
} from "../ordering/effects.js";

/**
 * The shop's effects, declared once for both sides: the actors request them (`paymentEffect.request(key,
 * input)`) and receive their outcomes typed (`command.input`, `command.result`); the HTTP handlers in
 * this folder implement them for a dispatcher. The schemas are the boundary: a dispatcher checks the
 * stored input before every run or lookup, and every result before the owner gets it.
 */

const paymentInput: z.ZodType<PaymentInput> = z.object({
  orderId: z.string().min(1),
  amount: z.number().int().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR"),
});
const paymentResult: z.ZodType<PaymentResult> = z.object({ paymentId: z.string().min(1) });

export const paymentEffect = defineEffect({ kind: EFFECT_KINDS.payment, input: paymentInput, result: paymentResult });

const emailInput: z.ZodType<EmailInput> = z.object({
  to: z.string().min(1),
  template: z.string().min(1),
  orderId: z.string().min(1),
});
const emailResult: z.ZodType<EmailResult> = z.object({ messageId: z.string().min(1) });

export const emailEffect = defineEffect({ kind: EFFECT_KINDS.email, input: emailInput, result: emailResult });

const picklistInput: z.ZodType<PicklistInput> = z.object({
  orderId: z.string().min(1),
  lines: z.array(z.object({ sku: z.string().min(1), quantity: z.number().int().positive() })),
});
const picklistResult: z.ZodType<PicklistResult> = z.object({ picklistId: z.string().min(1) });

export const picklistEffect = defineEffect({
  kind: EFFECT_KINDS.picklist,
  input: picklistInput,
  result: picklistResult,
});

const refundInput: z.ZodType<RefundInput> = z.object({
  paymentId: z.string().min(1),
  amount: z.number().int().positive(),
});
const refundResult: z.ZodType<RefundResult> = z.object({ refundId: z.string().min(1) });

/** A refund of (part of) a charge, under its own key (`order:{id}:refund`, `…:refund:{adjustmentId}`). */
export const refundEffect = defineEffect({ kind: EFFECT_KINDS.refund, input: refundInput, result: refundResult });

const picklistCancelInput: z.ZodType<PicklistCancelInput> = z.object({ orderId: z.string().min(1) });
const picklistCancelResult: z.ZodType<PicklistCancelResult> = z.object({ cancelled: z.array(z.string()) });

/** Asks the warehouse to cancel an order's picklists; refused (failed) once it has shipped. */
export const picklistCancelEffect = defineEffect({
  kind: EFFECT_KINDS.picklistCancel,
  input: picklistCancelInput,
  result: picklistCancelResult,
});

const shipmentCheckInput: z.ZodType<ShipmentCheckInput> = z.object({
  orderId: z.string().min(1),
  picklistKey: z.string().min(1),
});
const lineSchema = z.object({ sku: z.string().min(1), quantity: z.number().int().positive() });
const shipmentCheckResult: z.ZodType<ShipmentCheckResult> = z.discriminatedUnion("status", [
  z.object({ status: z.literal("accepted") }),
  z.object({ status: z.literal("cancelled") }),
  z.object({
    status: z.literal("shipped"),
    shipment: z.object({ eventId: z.string().min(1), shipmentId: z.string().min(1), occurredAt: z.string().min(1) }),
    adjustments: z.array(
      z.object({ eventId: z.string().min(1), adjustmentId: z.string().min(1), lines: z.array(lineSchema).min(1) }),
    ),
  }),
]);

/**
 * Asks the warehouse what became of a picklist whose shipment webhook is overdue (a read: asking
 * again changes nothing). A definite failure means the warehouse has no record of the picklist.
 */
export const shipmentCheckEffect = defineEffect({
  kind: EFFECT_KINDS.shipmentCheck,
  input: shipmentCheckInput,
  result: shipmentCheckResult,
});
