import type { ActorDefinition } from "../core/actor.js";
import type {
  DecideContext,
  EffectOutcome,
  EffectRequest,
  MessageRequest,
  PublishRequest,
  Typed,
} from "../core/decider.js";
import type { Envelope } from "./envelope.js";
import type { CommandHandler } from "./handlers.js";

/** The command a process manager actor receives for each integration event routed to it. */
export interface ProcessEventCommand extends Typed {
  type: "oncely.process.event";
  envelope: Envelope;
}

export interface ProcessReaction<E extends Typed> {
  events?: E[];
  /** Commands to other actors: outbox messages, delivered at least once, deduplicated by the receiver. */
  send?: MessageRequest[];
  effects?: EffectRequest[];
  publish?: PublishRequest[];
}

export interface ProcessManagerDefinition<S, E extends Typed> {
  /** Actor type; each process instance is the actor `<type>/<correlation id>`. */
  type: string;
  /** The process instance an event belongs to (usually the correlation id or an order id); undefined: not ours. */
  correlate(envelope: Envelope): string | undefined;
  initialState(id: string): S;
  evolve(state: S, event: E): S;
  /**
   * Pure: react to an event given the process state. Record what was seen as events (so a
   * reaction happens once even if the same fact arrives under another eventId) and ask for
   * commands with stable ids derived from the process (`fulfilment:42:start-shipping`).
   */
  react(state: S, envelope: Envelope, context: DecideContext): ProcessReaction<E>;
  /** Outcomes of the messages it sent (delivered / rejected); default: nothing to do. */
  onOutcome?(state: S, outcome: EffectOutcome, context: DecideContext): ProcessReaction<E>;
}

export interface ProcessManager<S, E extends Typed> {
  actor: ActorDefinition<S, ProcessEventCommand, E, EffectOutcome>;
  /** Consumer handler that routes events to the process actor (messageId = eventId). */
  route: CommandHandler;
}

/**
 * A process manager: an actor keyed by correlation id that turns events into commands
 * (seed: PaymentProcessed → StartShipping). Causal order across bounded contexts is expressed
 * here, never assumed from arrival order.
 *
 * It is an ordinary actor on the runtime, so it has the same guarantees: its reaction, the events
 * recording it and the outbox rows of its commands commit together, the event's id is in its
 * inbox (a redelivery changes nothing), and its commands leave only after that commit.
 *
 * @example
 * const fulfilment = defineProcessManager({
 *   type: "fulfilment",
 *   correlate: (e) => (e.type === "PaymentProcessed" ? e.aggregateId : undefined),
 *   initialState: () => ({ started: false }),
 *   evolve: (s, e) => (e.type === "ShippingRequested" ? { started: true } : s),
 *   react: (s, e, ctx) => s.started ? {} : {
 *     events: [{ type: "ShippingRequested" }],
 *     send: [{ to: `shipping/${ctx.id}`, id: `fulfilment:${ctx.id}:start-shipping`, command: { type: "StartShipping" } }],
 *   },
 * });
 * // runtime actors: [fulfilment.actor]; consumer handler: fulfilment.route
 */
export function defineProcessManager<S, E extends Typed>(
  definition: ProcessManagerDefinition<S, E>,
): ProcessManager<S, E> {
  const actor: ActorDefinition<S, ProcessEventCommand, E, EffectOutcome> = {
    type: definition.type,
    initialState: definition.initialState,
    evolve: definition.evolve,
    decide(command, state, context) {
      if (command.type === "oncely.process.event") {
        return definition.react(state, (command as ProcessEventCommand).envelope, context);
      }
      return definition.onOutcome ? definition.onOutcome(state, command, context) : {};
    },
  };
  const route: CommandHandler = {
    kind: "command",
    route(envelope) {
      const id = definition.correlate(envelope);
      if (id === undefined) return undefined;
      const command: ProcessEventCommand = { type: "oncely.process.event", envelope };
      return { address: `${definition.type}/${id}`, command };
    },
  };
  return { actor, route };
}
