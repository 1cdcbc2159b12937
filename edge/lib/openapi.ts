import { OpenAPIHono } from "@hono/zod-openapi";
import { AppError } from "../../shared/errors";
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

export const problemResponses = {
  400: { description: "Invalid request", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } },
  401: { description: "Missing, malformed, unknown or revoked API key", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } },
} as const;

export const bearerSecurity = [{ bearerAuth: [] }];
