import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>>;
  components: { schemas: Record<string, { example?: unknown; examples?: unknown[]; properties?: Record<string, unknown> }> };
}

/**
 * Components without an example of their own, each for a stated reason. Keep it short: a new
 * schema gets an example (`.meta({ example })`) rather than a line here.
 */
const WITHOUT_EXAMPLE: Record<string, string> = {
  Me: "the account (shared/schemas/accounts.ts), from before examples were required",
  Usage: "part of Me",
  SignUploadRequest: "signed uploads (shared/schemas/files.ts), from before examples were required",
  SignUploadResponse: "signed uploads",
};

let document: OpenApiDocument;

beforeAll(async () => {
  const response = await SELF.fetch("http://localhost:8787/openapi.json");
  expect(response.status).toBe(200);
  document = await response.json<OpenApiDocument>();
});

/** Every `#/components/schemas/<name>` that `value` refers to, directly or through other components. */
function reachableComponents(value: unknown, schemas: OpenApiDocument["components"]["schemas"], found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) reachableComponents(item, schemas, found);
  } else if (value && typeof value === "object") {
    for (const [key, member] of Object.entries(value)) {
      const name = key === "$ref" && typeof member === "string" ? /^#\/components\/schemas\/(.+)$/.exec(member)?.[1] : undefined;
      if (name !== undefined) {
        if (!found.has(name)) {
          found.add(name);
          reachableComponents(schemas[name], schemas, found);
        }
      } else {
        reachableComponents(member, schemas, found);
      }
    }
  }
  return found;
}

/**
 * Whether a schema shows an example: its own (`example` or `examples`), or one on a member of
 * it (a property, an item, a variant), not counting other components it refers to.
 */
function hasExample(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasExample);
  if (!schema || typeof schema !== "object") return false;
  const record = schema as Record<string, unknown>;
  if (record.example !== undefined || (Array.isArray(record.examples) && record.examples.length > 0)) return true;
  return Object.entries(record).some(([key, member]) => key !== "$ref" && typeof member === "object" && hasExample(member));
}

describe("examples in the OpenAPI document", () => {
  it("finds the components an operation uses, through nested references too", () => {
    const schemas = { A: { properties: { b: { $ref: "#/components/schemas/B" } } }, B: { items: { $ref: "#/components/schemas/C" } }, C: {}, D: {} } as unknown as OpenApiDocument["components"]["schemas"];
    expect([...reachableComponents({ responses: { 200: { schema: { $ref: "#/components/schemas/A" } } } }, schemas)].sort()).toEqual(["A", "B", "C"]);
  });

  it("counts an example on the schema or on one of its members, not on a component it refers to", () => {
    expect(hasExample({ example: { a: 1 } })).toBe(true);
    expect(hasExample({ properties: { a: { type: "string", example: "x" } } })).toBe(true);
    expect(hasExample({ properties: { a: { anyOf: [{ type: "null" }, { type: "string", examples: ["x"] }] } } })).toBe(true);
    expect(hasExample({ properties: { a: { $ref: "#/components/schemas/B" } } })).toBe(false);
    expect(hasExample({ properties: { a: { type: "string", description: "no example" } } })).toBe(false);
  });

  it("gives every schema component a /v1 operation uses an example, but for a short explicit list", () => {
    const operations = Object.entries(document.paths).filter(([path]) => path.startsWith("/v1/")).map(([, item]) => item);
    const used = reachableComponents(operations, document.components.schemas);
    expect(used.size).toBeGreaterThan(20);
    const missing = [...used].filter((name) => !hasExample(document.components.schemas[name]));
    expect(missing.filter((name) => !(name in WITHOUT_EXAMPLE)).sort()).toEqual([]);
    expect(Object.keys(WITHOUT_EXAMPLE).length).toBeLessThanOrEqual(10);
  });
});

describe("problem answers in the OpenAPI document", () => {
  const PROBLEM = { $ref: "#/components/schemas/Problem" };
  const problemOf = (path: string, method: string, status: string) => document.paths[path]?.[method]?.responses[status]?.content?.["application/problem+json"]?.schema;

  it("lists every status POST /v1/tasks answers with a problem, PRESET_NOT_FOUND's 404 included", () => {
    for (const status of ["400", "401", "404", "409", "413", "429"]) expect(problemOf("/v1/tasks", "post", status), status).toEqual(PROBLEM);
  });

  it("gives the batch's and the retry's refusals the problem schema", () => {
    for (const status of ["400", "401", "409", "413"]) expect(problemOf("/v1/tasks/batch", "post", status), status).toEqual(PROBLEM);
    for (const status of ["400", "401", "404", "409", "429"]) expect(problemOf("/v1/tasks/{task_id}/retry", "post", status), status).toEqual(PROBLEM);
  });

  it("gives a built-in preset's 403 and a disabled endpoint's 409 the problem schema", () => {
    expect(problemOf("/v1/presets/{preset}", "patch", "403")).toEqual(PROBLEM);
    expect(problemOf("/v1/presets/{preset}", "delete", "403")).toEqual(PROBLEM);
    expect(problemOf("/v1/webhooks/endpoints/{endpoint_id}/deliveries/{event_id}/redeliver", "post", "409")).toEqual(PROBLEM);
  });

  it("names the optional members problems carry", () => {
    const members = Object.keys(document.components.schemas.Problem?.properties ?? {});
    expect(members).toEqual(expect.arrayContaining(["pointer", "param", "step", "token", "preset", "destination", "input", "issues"]));
  });
});
