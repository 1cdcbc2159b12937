import type { ZodType } from "zod";
import { ProblemSchema } from "../../../shared/errors";

/** A required JSON body, validated by the route (VALIDATION_FAILED / INVALID_JSON otherwise). */
export function json<T extends ZodType>(schema: T) {
  return { body: { required: true, content: { "application/json": { schema } } } };
}

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: ProblemSchema } } });

export const problems = {
  400: problem("Invalid request"),
  401: problem("Not signed in, or wrong credentials"),
  403: problem("CSRF_FAILED or EMAIL_NOT_VERIFIED"),
  429: problem("TOO_MANY_ATTEMPTS or RATE_LIMITED"),
} as const;
