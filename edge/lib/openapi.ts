import { OpenAPIHono, createRoute, type z } from "@hono/zod-openapi";
import type { Hono } from "hono";
import { AppError, ProblemSchema } from "../../shared/errors";
import type { AuthVariables } from "./auth";

export type AppEnv = { Bindings: Env; Variables: AuthVariables };

/** Every sub-app is built here so that schema failures become the same problem details. */
export function createApp() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const issues = result.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`);
        throw new AppError("VALIDATION_FAILED", `The request is invalid. ${issues.join("; ")}.`, { issues: result.error.issues.map(({ path, message }) => ({ path, message })) });
      }
    },
  });
}

/** Referencing the schema itself (its `.meta()` id) is what registers the `Problem` component. */
const problemContent = { "application/problem+json": { schema: ProblemSchema } };

export const problemResponses = {
  400: { description: "Invalid request", content: problemContent },
  401: { description: "Missing, malformed, unknown or revoked API key", content: problemContent },
} as const;

export const bearerSecurity = [{ bearerAuth: [] }];

/**
 * Mounts each sub-app at the root, in order: their routes carry their own full paths, and
 * their OpenAPI paths join the app's document. The list is typed loosely: each sub-app declares
 * its own context variables and Hono's types are invariant in them.
 */
export function mountAll(app: OpenAPIHono<AppEnv>, subApps: Hono<any, any, any>[]): void {
  for (const subApp of subApps) app.route("/", subApp);
}

/** `GET path` with an API key: one page of the caller's resources, chosen by `query` and answered as `page`. */
export function pageRoute<Path extends string, Query extends z.ZodObject, Page extends z.ZodType>(spec: { path: Path; tag: string; summary: string; description: string; query: Query; page: Page }) {
  return createRoute({
    method: "get", path: spec.path, tags: [spec.tag], summary: spec.summary, security: bearerSecurity,
    request: { query: spec.query },
    responses: { 200: { description: spec.description, content: { "application/json": { schema: spec.page } } }, ...problemResponses },
  });
}
