import { expect } from "vitest";

/**
 * Asserts an RFC 9457 answer with the given status and catalogue code; returns its body.
 * Runtime-neutral (only `Response` and vitest), so tests inside workerd and in Node share it.
 */
export async function expectProblem(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  expect({ status: response.status, code: (JSON.parse(text) as { code?: string }).code }, text).toEqual({ status, code });
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return JSON.parse(text) as Record<string, unknown>;
}
