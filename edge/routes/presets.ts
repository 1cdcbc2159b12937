import { createRoute } from "@hono/zod-openapi";
import { AppError, ProblemSchema } from "../../shared/errors";
import { CreatePresetSchema, ExpandPresetSchema, ExpandedPresetSchema, ListPresetsQuerySchema, PresetListSchema, PresetParamSchema, PresetSchema, UpdatePresetSchema } from "../../shared/schemas/presets";
import { requireApiKey } from "../accounts/credentials";
import { bearerSecurity, createApp, pageRoute, problemResponses } from "../lib/openapi";
import { createPreset, expandForUser, presetsOf, removePreset, resolvePreset, updatePreset } from "../presets/manage";

/** Saved command templates: `{base_url}/presets` (docs/presets.md). */
export const presets = createApp();
presets.use("/v1/presets", requireApiKey);
presets.use("/v1/presets/*", requireApiKey);

/** A preset body that does not parse is an invalid preset, named like every other problem of one. */
const asInvalidPreset = (result: { success: boolean; target: string; error?: { issues: { path: PropertyKey[]; message: string }[] } }): undefined => {
  if (result.success || !result.error) return undefined;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join(".");
  throw new AppError(result.target === "json" ? "PRESET_INVALID" : "VALIDATION_FAILED", `${field || "preset"}: ${issue.message}.`, { field });
};

const presetResponse = (description: string) => ({ description, content: { "application/json": { schema: PresetSchema } } });

presets.openapi(
  createRoute({
    method: "post", path: "/v1/presets", tags: ["Presets"], summary: "Save a command template with typed parameters", security: bearerSecurity,
    description: "`{{name}}` in the command stands for the parameter `name`. Checked when saved: the parameters are the supported JSON Schema subset, every placeholder names a parameter and every parameter is used, and the command passes the ffmpeg policy with sample values (PRESET_INVALID names the problem). A `destination` must be one of yours (DESTINATION_NOT_FOUND); tasks from the preset deliver there unless they name their own.",
    request: { body: { required: true, content: { "application/json": { schema: CreatePresetSchema } } } },
    responses: { 201: presetResponse("The preset, saved"), ...problemResponses, 409: { description: "PRESET_NAME_TAKEN: you have a preset of that name, or it is a built-in one's; PRESET_LIMIT_REACHED: you have 200 presets" } },
  }),
  async (c) => {
    const preset = await createPreset(c.env, c.get("userId"), c.req.valid("json"));
    return c.json(preset, 201, { location: `/v1/presets/${preset.id}` });
  },
  asInvalidPreset,
);

presets.openapi(
  pageRoute({ path: "/v1/presets", tag: "Presets", summary: "The built-in presets, then yours", description: "A page of presets", query: ListPresetsQuerySchema, page: PresetListSchema }),
  async (c) => c.json(await presetsOf(c.env, c.get("userId"), c.req.valid("query")), 200),
);

presets.openapi(
  createRoute({
    method: "get", path: "/v1/presets/{preset}", tags: ["Presets"], summary: "A preset, by id or name", security: bearerSecurity,
    request: { params: PresetParamSchema },
    responses: { 200: presetResponse("The preset"), ...problemResponses, 404: { description: "PRESET_NOT_FOUND" } },
  }),
  async (c) => c.json(await resolvePreset(c.env, c.get("userId"), c.req.valid("param").preset), 200),
);

presets.openapi(
  createRoute({
    method: "patch", path: "/v1/presets/{preset}", tags: ["Presets"], summary: "Change one of your presets", security: bearerSecurity,
    description: "Only the fields given change; the preset is then checked as a whole, as when it was saved (`destination`: one of yours, DESTINATION_NOT_FOUND otherwise; null removes it). Tasks already submitted keep the command and destination they were given.",
    request: { params: PresetParamSchema, body: { required: true, content: { "application/json": { schema: UpdatePresetSchema } } } },
    responses: { 200: presetResponse("The preset, changed"), ...problemResponses, 403: { description: "PRESET_READ_ONLY: a built-in preset", content: { "application/problem+json": { schema: ProblemSchema } } }, 404: { description: "PRESET_NOT_FOUND" }, 409: { description: "PRESET_NAME_TAKEN" } },
  }),
  async (c) => c.json(await updatePreset(c.env, c.get("userId"), c.req.valid("param").preset, c.req.valid("json")), 200),
  asInvalidPreset,
);

presets.openapi(
  createRoute({
    method: "delete", path: "/v1/presets/{preset}", tags: ["Presets"], summary: "Delete one of your presets", security: bearerSecurity,
    request: { params: PresetParamSchema },
    responses: { 204: { description: "Deleted" }, ...problemResponses, 403: { description: "PRESET_READ_ONLY: a built-in preset", content: { "application/problem+json": { schema: ProblemSchema } } }, 404: { description: "PRESET_NOT_FOUND" } },
  }),
  async (c) => {
    await removePreset(c.env, c.get("userId"), c.req.valid("param").preset);
    return c.body(null, 204);
  },
);

presets.openapi(
  createRoute({
    method: "post", path: "/v1/presets/{preset}/expand", tags: ["Presets"], summary: "The command a preset gives with these values, without running it", security: bearerSecurity,
    description: "The same checks as POST /v1/tasks with this preset and params (PRESET_PARAMS_INVALID, then the ffmpeg policy), and nothing is run or recorded.",
    request: { params: PresetParamSchema, body: { required: true, content: { "application/json": { schema: ExpandPresetSchema } } } },
    responses: { 200: { description: "The values fit and the command passes the policy", content: { "application/json": { schema: ExpandedPresetSchema } } }, ...problemResponses, 404: { description: "PRESET_NOT_FOUND" } },
  }),
  async (c) => c.json(await expandForUser(c.env, c.get("userId"), c.req.valid("param").preset, c.req.valid("json").params), 200),
);
