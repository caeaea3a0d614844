import { InvalidInputError } from "../base/errors.js";

/** Actors are addressed `type/id`; the address is also the name of the actor's event stream. */
export interface Address {
  type: string;
  id: string;
}

export function parseAddress(address: string): Address {
  // Callers from plain JavaScript (or `as` casts) pass anything: name it rather than fail on a method call.
  if (typeof address !== "string") {
    throw new InvalidInputError(`actor address must be a string "type/id", got ${describeValue(address)}`);
  }
  const slash = address.indexOf("/");
  if (slash <= 0 || slash === address.length - 1) {
    throw new InvalidInputError(`actor address must look like "type/id", got "${address}"`);
  }
  return { type: address.slice(0, slash), id: address.slice(slash + 1) };
}

export const formatAddress = (type: string, id: string): string => `${type}/${id}`;

const describeValue = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
