import { NotRegisteredError } from "../base/errors.js";
import type { AnyActor } from "../core/actor.js";
import { formatAddress } from "../core/address.js";
import type { Typed } from "../core/decider.js";
import type { SendOptions, SendResult } from "../core/runtime.js";
import type { RoutedResult } from "../ownership/router.js";
import type { WaitOptions } from "./await.js";

/** The state type of an actor definition, from its `initialState`. */
export type StateOf<A> = A extends { initialState(id: string): infer S } ? S : never;

/**
 * The commands an actor definition takes from callers (its `C`, without the outcomes the runtime
 * routes back), read from the declarations that carry `C` alone: `parseCommand`, `commands`.
 */
export type CommandsOf<A> = A extends { parseCommand?: ((input: unknown) => infer C) | undefined }
  ? C extends Typed
    ? C
    : never
  : never;

/** What the address-based host calls a typed handle goes through; `Host` implements it. */
export interface AddressedHost {
  send(address: string, command: Typed, options?: SendOptions): Promise<SendResult | RoutedResult>;
  state<S>(address: string): Promise<{ state: S; version: number }>;
  waitFor<S>(
    address: string,
    predicate: (state: S) => boolean,
    options?: WaitOptions,
  ): Promise<{ state: S; version: number }>;
}

/**
 * One actor type of a host, by id: `send` takes only the actor's commands, `state` and `waitFor`
 * know its state type, so a misspelt command or a predicate on another state does not compile.
 * The address form (`host.send("order/42", ...)`) stays available for what is only known at run time.
 */
export interface ActorHandle<S, C extends Typed> {
  /** The actor type, the address prefix. */
  readonly type: string;
  /** The address of the actor with this id: `type/id`. */
  address(id: string): string;
  /** Handle a command (checked against the actor's `commands` schema when it declares one). */
  send(id: string, command: C, options?: SendOptions): Promise<SendResult | RoutedResult>;
  /** The actor's current state. */
  state(id: string): Promise<{ state: S; version: number }>;
  /** Resolve with the actor's state once `predicate` holds. */
  waitFor(id: string, predicate: (state: S) => boolean, options?: WaitOptions): Promise<{ state: S; version: number }>;
}

/** A typed handle on `definition`, which must be one of the host's actors. */
export function actorHandle<A extends AnyActor>(
  host: AddressedHost,
  actors: readonly AnyActor[],
  definition: A,
): ActorHandle<StateOf<A>, CommandsOf<A>> {
  if (!actors.some((actor) => actor.type === definition.type)) {
    throw new NotRegisteredError(
      `actor type "${definition.type}" is not one of this host's actors (${actors.map((a) => a.type).join(", ") || "none"})`,
    );
  }
  const address = (id: string) => formatAddress(definition.type, id);
  return {
    type: definition.type,
    address,
    // Async, so that a command refused by a check rejects the promise rather than throwing.
    send: async (id, command, options) => host.send(address(id), command, options),
    state: async (id) => host.state<StateOf<A>>(address(id)),
    waitFor: async (id, predicate, options) => host.waitFor<StateOf<A>>(address(id), predicate, options),
  };
}
