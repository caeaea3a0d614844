import { SIGNATURE_HEADER, signWebhook } from "../../examples/shop/providers/shared/webhook-signature.js";

/** One answer of the shop, the body parsed when it is JSON. */
export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
  body: any;
}

/** A request to the shop at `baseUrl`; a string body is sent as is (to test bad JSON), anything else as JSON. */
export async function callShop(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const raw = typeof body === "string" ? body : body === undefined ? undefined : JSON.stringify(body);
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(raw === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(raw === undefined ? {} : { body: raw }),
  });
  const text = await response.text();
  let parsed: unknown = text === "" ? undefined : text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** The headers of a webhook call signed as the warehouse signs it (at `nowMs`, default now). */
export function signedHeaders(secret: string, body: string, nowMs = Date.now()): Record<string, string> {
  return { [SIGNATURE_HEADER]: signWebhook(secret, body, nowMs) };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
