/** Small HTTP helpers shared by the provider integration tests. */

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export async function post(
  url: string,
  path: string,
  body: unknown,
  options: { key?: string; signal?: AbortSignal } = {},
): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(options.key === undefined ? {} : { "idempotency-key": options.key }),
    },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function get(url: string, path: string): Promise<Answer> {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
