import type { EffectType, MessageRequest, PublishRequest, Typed } from "../core/decider.js";

/** What a step's input builder reads: the flow's id, its starting command and the results so far. */
export interface StepContext<Start, R> {
  id: string;
  start: Start;
  results: R;
}

/** What a failure branch's steps read besides: which step failed, and why. */
export interface FailureContext<Start, R> extends StepContext<Start, Partial<R>> {
  failure: { step: string; error: string };
}

/** A published integration event, as a step builds it: the runtime stamps its version and the flow its id. */
export type PublishStep = Omit<PublishRequest, "eventId" | "aggregateId" | "aggregateVersion"> & {
  aggregateId?: string;
};

/** One step of a flow, as data. Effect steps wait for their outcome; publish and send steps are immediate. */
export type FlowStep =
  | {
      kind: "effect";
      name: string;
      effect: EffectType;
      input(context: never): unknown;
    }
  | { kind: "publish"; name: string; event(context: never): PublishStep }
  | { kind: "send"; name: string; message(context: never): Omit<MessageRequest, "id"> };

/** The key of a step's effect, publish or message: the flow's business action, stable across retries. */
export const stepKey = (type: string, id: string, step: string): string => `${type}:${id}:${step}`;

export type { Typed };
