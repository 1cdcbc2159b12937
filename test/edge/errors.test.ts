import { SELF } from "cloudflare:test";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { AppError } from "../../shared/errors";
import { onError } from "../../edge/lib/problem";
import { api, createUser } from "./helpers";
import { expectProblem } from "../helpers/problems";

describe("problem details for routing errors", () => {
  it("answers an unknown route with 404 application/problem+json in RFC 9457 shape", async () => {
    const response = await SELF.fetch("http://localhost:8787/no/such/route");
    const problem = await expectProblem(response, 404, "NOT_FOUND");
    expect(problem).toMatchObject({ type: "https://ffedge.dev/problems/not-found", title: "Not found", status: 404 });
    expect(problem.detail).toContain("/no/such/route");
  });

  it.each([
    ["DELETE", "/api/upload/file", "POST"],
    ["GET", "/api/upload/base64", "POST"],
    ["PUT", "/api/upload/url", "POST"],
    ["GET", "/v1/uploads/sign", "POST"],
    ["POST", "/v1/me", "GET"],
  ])("answers %s %s with 405 problem+json and Allow: %s", async (method, path, allow) => {
    const { key } = await createUser();
    const response = await api(path, key, { method });
    await expectProblem(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe(allow);
  });

  it("answers a write to the CDN with 405 and Allow listing GET and HEAD", async () => {
    const response = await SELF.fetch("http://localhost:8787/uploads/usr_x/abc.mp4", { method: "PUT", body: "x" });
    await expectProblem(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "HEAD"]);
  });

  it("authenticates before routing by method, so a stranger learns nothing about a protected path", async () => {
    await expectProblem(await api("/v1/me", undefined, { method: "DELETE" }), 401, "UNAUTHORIZED");
  });
});

describe("onError", () => {
  function appThrowing(error: Error): Hono {
    const app = new Hono();
    app.get("/", () => {
      throw error;
    });
    app.onError(onError);
    return app;
  }

  it("turns an AppError into its status, code and extra fields", async () => {
    const response = await appThrowing(new AppError("PAYLOAD_TOO_LARGE", "Too big.", { limit: 5 })).request("/");
    expect(await expectProblem(response, 413, "PAYLOAD_TOO_LARGE")).toMatchObject({ detail: "Too big.", limit: 5 });
  });

  it.each([
    [413, "PAYLOAD_TOO_LARGE"],
    [415, "UNSUPPORTED_MEDIA_TYPE"],
    [401, "UNAUTHORIZED"],
    [400, "VALIDATION_FAILED"],
  ] as const)("maps Hono's HTTPException %i to %s", async (status, code) => {
    await expectProblem(await appThrowing(new HTTPException(status, { message: "x" })).request("/"), status, code);
  });

  it("answers an unexpected error with 500 INTERNAL and no internals", async () => {
    const response = await appThrowing(new Error("database password is hunter2")).request("/");
    const problem = await expectProblem(response, 500, "INTERNAL");
    expect(JSON.stringify(problem)).not.toContain("hunter2");
    expect(JSON.stringify(problem)).not.toContain("stack");
  });
});
