import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentText, typesFor } from "../../../clients/sdk/scripts/openapi-types";
import { Stack } from "../../../scripts/lib/local-stack";

/**
 * The SDK's types cannot drift from the API: the snapshot must be what the Worker serves, and
 * the types must be what openapi-typescript makes of the snapshot.
 */
const FIX = "run `npm run sdk:generate` and commit clients/sdk/openapi.json and clients/sdk/src/openapi.ts";

let stack: Stack;

beforeAll(async () => {
  stack = await Stack.start();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe("the SDK's generated types", () => {
  it("come from the OpenAPI document the Worker serves", async () => {
    const served = documentText(await (await stack.fetch("/openapi.json")).json());
    const snapshot = await readFile("clients/sdk/openapi.json", "utf8");
    expect(snapshot, `clients/sdk/openapi.json differs from GET /openapi.json: ${FIX}`).toBe(served);
  });

  it("are what openapi-typescript makes of the snapshot", async () => {
    const snapshot = await readFile("clients/sdk/openapi.json", "utf8");
    const types = await readFile("clients/sdk/src/openapi.ts", "utf8");
    expect(types, `clients/sdk/src/openapi.ts is not generated from clients/sdk/openapi.json: ${FIX}`).toBe(await typesFor(snapshot));
  });
});
