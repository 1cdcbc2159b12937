import { createRoute } from "@hono/zod-openapi";
import {
  CreateDestinationSchema, DestinationIdParamSchema, DestinationListSchema, DestinationSchema, DestinationTestResultSchema, ListDestinationsQuerySchema, UpdateDestinationSchema,
} from "../../shared/schemas/destinations";
import { requireApiKey } from "../accounts/credentials";
import { MAX_DESTINATIONS_PER_USER, createDestination, removeDestination, requireDestination, testDestination, updateDestination } from "../destinations/manage";
import { listDestinations, presentDestination } from "../destinations/repository";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { presetsNamingDestination } from "../presets/repository";

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });
const json = <T>(schema: T) => ({ "application/json": { schema } });
const notFound = { 404: problem("No such destination for this key (by id or name)") };

/** The caller's own S3-compatible buckets that task outputs are delivered to (docs/destinations.md). */
export const destinations = createApp();
destinations.use("/v1/destinations", requireApiKey);
destinations.use("/v1/destinations/*", requireApiKey);

destinations.openapi(
  createRoute({
    method: "post", path: "/v1/destinations", tags: ["Destinations"], summary: "Save a destination (its secret is stored encrypted and never returned)", security: bearerSecurity,
    description: `The endpoint must be https on a public host (URL_NOT_ALLOWED, URL_HOST_BLOCKED). At most ${MAX_DESTINATIONS_PER_USER} destinations per user (DESTINATION_LIMIT_REACHED).`,
    request: { body: { required: true, content: json(CreateDestinationSchema) } },
    responses: {
      201: { description: "The destination, with only a fingerprint of its credentials", content: json(DestinationSchema) },
      ...problemResponses,
      409: problem(`You already have a destination by that name (DESTINATION_NAME_TAKEN, \`name\` names it) or ${MAX_DESTINATIONS_PER_USER} destinations (DESTINATION_LIMIT_REACHED)`),
    },
  }),
  async (c) => c.json(presentDestination(await createDestination(c.env, c.get("userId"), c.req.valid("json"))), 201),
);

destinations.openapi(
  createRoute({
    method: "get", path: "/v1/destinations", tags: ["Destinations"], summary: "The caller's destinations, by name", security: bearerSecurity,
    request: { query: ListDestinationsQuerySchema },
    responses: { 200: { description: "A page of the caller's destinations (`limit`, default 50, `offset`) and their `total`", content: json(DestinationListSchema) }, ...problemResponses },
  }),
  async (c) => {
    const { total, rows } = await listDestinations(c.env.DB, c.get("userId"), c.req.valid("query"));
    return c.json({ total, destinations: rows.map(presentDestination) }, 200);
  },
);

destinations.openapi(
  createRoute({
    method: "get", path: "/v1/destinations/{destination_id}", tags: ["Destinations"], summary: "One destination, by id or name", security: bearerSecurity,
    request: { params: DestinationIdParamSchema },
    responses: { 200: { description: "The destination", content: json(DestinationSchema) }, ...problemResponses, ...notFound },
  }),
  async (c) => c.json(presentDestination(await requireDestination(c.env.DB, c.get("userId"), c.req.valid("param").destination_id)), 200),
);

destinations.openapi(
  createRoute({
    method: "patch", path: "/v1/destinations/{destination_id}", tags: ["Destinations"], summary: "Change a destination; new credentials replace the stored ones", security: bearerSecurity,
    request: { params: DestinationIdParamSchema, body: { required: true, content: json(UpdateDestinationSchema) } },
    description: "Any field but `type`; a field this resource does not have is refused (VALIDATION_FAILED naming it) rather than ignored.",
    responses: { 200: { description: "The destination as changed", content: json(DestinationSchema) }, ...problemResponses, ...notFound, 409: problem("The new name is another destination's (DESTINATION_NAME_TAKEN, `name` names it)") },
  }),
  async (c) => c.json(presentDestination(await updateDestination(c.env, c.get("userId"), c.req.valid("param").destination_id, c.req.valid("json"))), 200),
);

destinations.openapi(
  createRoute({
    method: "delete", path: "/v1/destinations/{destination_id}", tags: ["Destinations"], summary: "Delete a destination (deliveries still pending to it fail DESTINATION_NOT_FOUND)", security: bearerSecurity,
    request: { params: DestinationIdParamSchema },
    responses: { 204: { description: "Deleted" }, ...problemResponses, ...notFound, 409: problem("Presets name it (DESTINATION_IN_USE, `presets` lists them): change them first") },
  }),
  async (c) => {
    const userId = c.get("userId");
    await removeDestination(c.env, userId, c.req.valid("param").destination_id, (destinationId) => presetsNamingDestination(c.env.DB, userId, destinationId));
    return c.body(null, 204);
  },
);

destinations.openapi(
  createRoute({
    method: "post", path: "/v1/destinations/{destination_id}/test", tags: ["Destinations"], summary: "Write and delete a probe object with the stored credentials", security: bearerSecurity,
    request: { params: DestinationIdParamSchema },
    responses: {
      200: { description: "The probe was written and deleted", content: json(DestinationTestResultSchema) },
      ...problemResponses,
      ...notFound,
      422: problem("The destination refused the probe (DESTINATION_REFUSED, with S3's code in `s3_code`) or the key pair (DESTINATION_CREDENTIALS); `destination` is its id"),
      502: problem("The destination could not be reached (DESTINATION_UNREACHABLE); `destination` is its id"),
    },
  }),
  async (c) => c.json(await testDestination(c.env, c.get("userId"), c.req.valid("param").destination_id), 200),
);
