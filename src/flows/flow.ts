import { InvalidInputError } from "../base/errors.js";
import type { SchemaLike } from "../base/standard-schema.js";
import type { ActorDefinition, EventSchemas, SnapshotPolicy } from "../core/actor.js";
import type {
  DecideContext,
  Decision,
  EffectOutcome,
  EffectRequest,
  EffectType,
  MessageRequest,
  PublishRequest,
  Typed,
} from "../core/decider.js";
import { type FailureContext, type FlowStep, type PublishStep, type StepContext, stepKey } from "./steps.js";

/** The results of a flow before its first step. */
type NoResults = Record<never, never>;

/** Where a flow is: not started, running its steps, compensating after a failure, or done. */
export type FlowStatus = "NotStarted" | "Running" | "Compensating" | "Completed" | "Failed";

/** The state of a flow actor: generated, the same for every flow. */
export interface FlowState<Start, R> {
  status: FlowStatus;
  start: Start | null;
  /** Each finished step's result, by step name (`null` for publish and send steps). */
  results: Partial<R>;
  /** The step waiting for its effect's outcome. */
  waiting: string | null;
  /** Set while the awaited effect's outcome is unknown (a lookup or an operator will settle it). */
  unknown: string | null;
  failure: { step: string; error: string } | null;
}

/** The events of a flow actor: generated, the same for every flow. */
export type FlowEvent =
  | { type: "FlowStarted"; start: unknown }
  | { type: "StepRequested"; step: string }
  | { type: "StepCompleted"; step: string; result: unknown }
  | { type: "StepUnknown"; step: string; error: string }
  | { type: "StepFailed"; step: string; error: string }
  | { type: "FlowCompleted" }
  | { type: "FlowFailed" };

/** A flow as an actor: its commands are the starting command. */
export type FlowActor<Start extends Typed, R> = ActorDefinition<
  FlowState<Start, R>,
  Start,
  FlowEvent,
  EffectOutcome
> & {
  commands?: SchemaLike<Start>;
};

const flowEvents: EventSchemas<FlowEvent> = {
  FlowStarted: { version: 1 },
  StepRequested: { version: 1 },
  StepCompleted: { version: 1 },
  StepUnknown: { version: 1 },
  StepFailed: { version: 1 },
  FlowCompleted: { version: 1 },
  FlowFailed: { version: 1 },
};

/**
 * A sequential flow, as data: each `effect` step's input is built from the starting command and
 * the typed results of the steps before it; `publish` and `send` steps leave through the outbox
 * in the commit that reaches them; `onFailure` lists the steps run when an effect fails
 * (compensation), reading which step failed and why. `build()` turns the list into an ordinary
 * actor whose events, state, `evolve` and `decide` are generated: it replays, simulates and shows
 * in the console like any other, its effects keep the key `type:id:step`, and an Unknown outcome
 * waits for the lookup or the operator as it does everywhere.
 *
 * @example
 * const renewal = flow("renewal", { commands: renewSchema })
 *   .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
 *   .effect("receipt", receipt, ({ start, results }) => ({ to: start.email, chargeId: results.charge.chargeId }))
 *   .publish("renewed", ({ start }) => ({ type: "SubscriptionRenewed", source: "billing", payload: start }))
 *   .build();
 */
export function flow<Start extends Typed>(
  type: string,
  options: FlowOptions<Start> = {},
): FlowBuilder<Start, NoResults> {
  if (typeof type !== "string" || type === "" || type.includes("/")) {
    throw new InvalidInputError(`a flow needs a type (a non-empty string without "/"), got ${JSON.stringify(type)}`);
  }
  return new FlowBuilder<Start, NoResults>(type, options, [], []);
}

export interface FlowOptions<Start> {
  /** The starting command's Standard Schema: checked where commands enter (see `ActorDefinition.commands`). */
  commands?: SchemaLike<Start>;
  snapshot?: SnapshotPolicy<FlowState<Start, never>>;
  /**
   * Schemas of the generated events, over the defaults (each at version 1): when a step's result or
   * the starting command changes shape, raise that event's `version` and give the `upcast` steps that
   * read the journal's older ones (e.g. `StepCompleted`, switching on `step`; see the evolution guide).
   */
  events?: Partial<EventSchemas<FlowEvent>>;
}

/** Builds a flow's step list; each method returns a new builder (the list is data, never mutated). */
export class FlowBuilder<Start extends Typed, R> {
  constructor(
    private readonly type: string,
    private readonly options: FlowOptions<Start>,
    private readonly steps: readonly FlowStep[],
    private readonly failureSteps: readonly FlowStep[],
  ) {}

  /** Request `effect` with the input built from what is known so far; its result is `results[name]` afterwards. */
  effect<N extends string, I, Res>(
    name: N,
    effect: EffectType<string, I, Res>,
    input: (context: StepContext<Start, R>) => NoInfer<I>,
  ): FlowBuilder<Start, R & { [K in N]: Res }> {
    return this.add({ kind: "effect", name, effect, input: input as (context: never) => unknown });
  }

  /** Publish an integration event (event id `type:id:step`, aggregate id the flow's id unless given). */
  publish(name: string, event: (context: StepContext<Start, R>) => PublishStep): FlowBuilder<Start, R> {
    return this.add({ kind: "publish", name, event: event as (context: never) => PublishStep });
  }

  /** Send a command to another actor (delivery id `type:id:step`). */
  send(name: string, message: (context: StepContext<Start, R>) => Omit<MessageRequest, "id">): FlowBuilder<Start, R> {
    return this.add({ kind: "send", name, message: message as (context: never) => Omit<MessageRequest, "id"> });
  }

  /** The steps run, in order, after an effect step fails: compensation, notification, a published failure. */
  onFailure(branch: (failure: FailureBuilder<Start, R>) => FailureBuilder<Start, R>): FlowBuilder<Start, R> {
    const built = branch(new FailureBuilder<Start, R>([]));
    return new FlowBuilder(this.type, this.options, this.steps, built.steps);
  }

  /** The flow as an actor: give it to `createHost({ actors })`, and its effects' handlers to `handlers`. */
  build(): FlowActor<Start, R> {
    return flowActor<Start, R>(this.type, this.options, this.steps, this.failureSteps);
  }

  private add<R2>(step: FlowStep): FlowBuilder<Start, R2> {
    const names = [...this.steps, ...this.failureSteps].map((s) => s.name);
    if (names.includes(step.name)) {
      throw new InvalidInputError(`flow "${this.type}" has two steps named "${step.name}": a step's name is its key`);
    }
    return new FlowBuilder<Start, R2>(this.type, this.options, [...this.steps, step], this.failureSteps);
  }
}

/** The failure branch's steps: they read `failure` besides what main steps read. */
export class FailureBuilder<Start, R> {
  constructor(readonly steps: readonly FlowStep[]) {}

  effect<I>(name: string, effect: EffectType<string, I>, input: (context: FailureContext<Start, R>) => NoInfer<I>) {
    return new FailureBuilder<Start, R>([...this.steps, { kind: "effect", name, effect, input: input as never }]);
  }

  publish(name: string, event: (context: FailureContext<Start, R>) => PublishStep) {
    return new FailureBuilder<Start, R>([...this.steps, { kind: "publish", name, event: event as never }]);
  }

  send(name: string, message: (context: FailureContext<Start, R>) => Omit<MessageRequest, "id">) {
    return new FailureBuilder<Start, R>([...this.steps, { kind: "send", name, message: message as never }]);
  }
}

function flowActor<Start extends Typed, R>(
  type: string,
  options: FlowOptions<Start>,
  main: readonly FlowStep[],
  failure: readonly FlowStep[],
): FlowActor<Start, R> {
  type State = FlowState<Start, R>;
  const all = [...main, ...failure];
  const effects = [...new Map(all.flatMap((s) => (s.kind === "effect" ? [[s.effect.kind, s.effect]] : []))).values()];
  const initialState = (): State => ({
    status: "NotStarted",
    start: null,
    results: {},
    waiting: null,
    unknown: null,
    failure: null,
  });

  const evolve = (state: State, event: FlowEvent): State => {
    switch (event.type) {
      case "FlowStarted":
        return { ...state, status: "Running", start: event.start as Start };
      case "StepRequested":
        return { ...state, waiting: event.step, unknown: null };
      case "StepCompleted":
        return {
          ...state,
          results: { ...state.results, [event.step]: event.result },
          waiting: state.waiting === event.step ? null : state.waiting,
          unknown: null,
        };
      case "StepUnknown":
        return { ...state, unknown: event.step };
      case "StepFailed":
        return state.status === "Compensating"
          ? { ...state, waiting: null, unknown: null } // a failed compensation: the flow ends Failed
          : {
              ...state,
              status: "Compensating",
              waiting: null,
              unknown: null,
              failure: { step: event.step, error: event.error },
            };
      case "FlowCompleted":
        return { ...state, status: "Completed" };
      case "FlowFailed":
        return { ...state, status: "Failed" };
    }
  };

  /** From `state`, take every step that needs no outcome, up to the next effect or the end of the branch. */
  const advance = (state: State, events: FlowEvent[], context: DecideContext): Decision<FlowEvent> => {
    const decision = {
      events,
      effects: [] as EffectRequest[],
      publish: [] as PublishRequest[],
      send: [] as MessageRequest[],
    };
    const apply = (event: FlowEvent) => {
      events.push(event);
      state = evolve(state, event);
    };
    const branch = state.status === "Compensating" ? failure : main;
    for (const step of branch) {
      if (step.name in (state.results as object)) continue;
      const stepContext = {
        id: context.id,
        start: state.start as Start,
        results: state.results,
        ...(state.failure ? { failure: state.failure } : {}),
      } as never;
      const key = stepKey(type, context.id, step.name);
      switch (step.kind) {
        case "effect":
          decision.effects.push({ kind: step.effect.kind, key, input: step.input(stepContext) });
          apply({ type: "StepRequested", step: step.name });
          return decision;
        case "publish": {
          const event = step.event(stepContext);
          decision.publish.push({ ...event, eventId: key, aggregateId: event.aggregateId ?? context.id });
          apply({ type: "StepCompleted", step: step.name, result: null });
          break;
        }
        case "send":
          decision.send.push({ ...step.message(stepContext), id: key });
          apply({ type: "StepCompleted", step: step.name, result: null });
          break;
      }
    }
    apply({ type: state.status === "Compensating" ? "FlowFailed" : "FlowCompleted" });
    return decision;
  };

  const decide = (received: Start | EffectOutcome, state: State, context: DecideContext): Decision<FlowEvent> => {
    // Start is generic and does not narrow: the runtime's commands are told apart by their `oncely.` type.
    const command = received as EffectOutcome | (Typed & { type: "start" });
    switch (command.type) {
      case "oncely.effect.succeeded":
      case "oncely.effect.failed":
      case "oncely.effect.unknown": {
        const step = all.find((s) => stepKey(type, context.id, s.name) === command.key);
        if (!step || state.waiting !== step.name) return {}; // not awaited (any more): recorded, nothing to do
        if (command.type === "oncely.effect.unknown")
          return { events: [{ type: "StepUnknown", step: step.name, error: command.error }] };
        const outcome: FlowEvent =
          command.type === "oncely.effect.succeeded"
            ? { type: "StepCompleted", step: step.name, result: command.result }
            : { type: "StepFailed", step: step.name, error: command.error };
        const next = evolve(state, outcome);
        if (outcome.type === "StepFailed" && state.status === "Compensating") {
          return { events: [outcome, { type: "FlowFailed" }] };
        }
        return advance(next, [outcome], context);
      }
      case "oncely.effect.needs-reconciliation":
      case "oncely.message.delivered":
      case "oncely.message.rejected":
        return {}; // in the reconciliation queue, or a delivery: the state already says where the flow is
      default: {
        if (state.status !== "NotStarted") return { reply: state }; // started once: asked again, nothing new
        const started: FlowEvent = { type: "FlowStarted", start: received };
        return advance(evolve(state, started), [started], context);
      }
    }
  };

  return {
    type,
    effects,
    messages: all.some((s) => s.kind === "send"),
    events: { ...flowEvents, ...options.events },
    initialState,
    evolve,
    decide: decide as FlowActor<Start, R>["decide"],
    ...(options.commands ? { commands: options.commands } : {}),
    ...(options.snapshot ? { snapshot: options.snapshot as unknown as SnapshotPolicy<State> } : {}),
  };
}
