import { upcast, VersionTooNewError } from "../core/upcast.js";
import type { OutboxRow } from "../journal/types.js";
import type { EffectHandler } from "./types.js";

/** What a row's input reads as for one handler: the input, or why it cannot be read. */
export type EffectInput = { input: unknown } | { tooNew: string } | { unreadable: string };

/**
 * The row's input in the shape `handler` takes. The row stores the input as the requesting code
 * wrote it, with `inputVersion` (absent: 1); the handler's `upcastInput` steps bring an older one
 * up to its `inputVersion`. An input no step reads is `unreadable` (the caller sends the effect
 * to the reconciliation queue: it never runs with a misread input); one newer than the handler
 * knows is `tooNew` (left for a dispatcher running newer code).
 */
// biome-ignore lint/suspicious/noExplicitAny: handlers of every input and result type
export function readEffectInput(row: OutboxRow, handler: EffectHandler<any, any>): EffectInput {
  const payload = row.payload as { input?: unknown; inputVersion?: unknown } | null;
  const input = payload?.input ?? null;
  const stored = payload?.inputVersion ?? 1;
  const schema = {
    version: handler.inputVersion ?? 1,
    ...(handler.upcastInput ? { upcast: handler.upcastInput } : {}),
  };
  try {
    if (typeof stored !== "number") throw new TypeError(`inputVersion ${JSON.stringify(stored)} is not a number`);
    const type = `${row.kind} input`;
    return { input: upcast(`effect ${row.id}`, { [type]: schema }, type, stored, input) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return error instanceof VersionTooNewError ? { tooNew: reason } : { unreadable: reason };
  }
}
