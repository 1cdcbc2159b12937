import { z } from "zod";
import { TaskDestinationSchema } from "./destinations";
import { decimalInteger } from "./tasks";

/** A parameter's name, as `{{name}}` in the command. */
export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/;
/** The longest string a parameter may hold; a string parameter's `maxLength` may only be lower. */
export const MAX_STRING_PARAMETER = 2048;
const MAX_PARAMETERS = 20;

const described = {
  title: z.string().max(100).optional(),
  description: z.string().max(500).optional(),
};

const integer = z.number().int().min(-1e15).max(1e15);
const finite = z.number().min(-1e15).max(1e15);
const string = z.string().max(MAX_STRING_PARAMETER);

const IntegerParameterSchema = z.strictObject({
  type: z.literal("integer"),
  minimum: integer.optional(),
  maximum: integer.optional(),
  enum: z.array(integer).min(1).max(50).optional(),
  default: integer.optional(),
  examples: z.array(integer).min(1).max(10).optional(),
  ...described,
});

const NumberParameterSchema = z.strictObject({
  type: z.literal("number"),
  minimum: finite.optional(),
  maximum: finite.optional(),
  enum: z.array(finite).min(1).max(50).optional(),
  default: finite.optional(),
  examples: z.array(finite).min(1).max(10).optional(),
  ...described,
});

const StringParameterSchema = z.strictObject({
  type: z.literal("string"),
  minLength: z.number().int().min(0).max(MAX_STRING_PARAMETER).optional(),
  maxLength: z.number().int().min(1).max(MAX_STRING_PARAMETER).optional(),
  pattern: z.string().min(1).max(256).optional().meta({ description: "An ECMAScript regular expression (with the `u` flag), as JSON Schema reads it: anchor it with ^…$ to match the whole value" }),
  enum: z.array(string).min(1).max(50).optional(),
  default: string.optional(),
  examples: z.array(string).min(1).max(10).optional(),
  ...described,
});

const BooleanParameterSchema = z.strictObject({
  type: z.literal("boolean"),
  default: z.boolean().optional(),
  examples: z.array(z.boolean()).min(1).max(2).optional(),
  ...described,
});

export const PresetParameterSchema = z
  .discriminatedUnion("type", [IntegerParameterSchema, NumberParameterSchema, StringParameterSchema, BooleanParameterSchema])
  .meta({ id: "PresetParameter", description: "One typed parameter: the JSON Schema keywords listed here and no others", example: { type: "integer", minimum: 16, maximum: 8192, default: 1280, description: "Output width in pixels" } });
export type PresetParameter = z.infer<typeof PresetParameterSchema>;

export const PresetParametersSchema = z
  .strictObject({
    $schema: z.string().max(200).optional(),
    type: z.literal("object"),
    properties: z
      .record(z.string().regex(PARAMETER_NAME, "a parameter name is a letter or '_', then letters, digits or '_' (at most 32)"), PresetParameterSchema)
      .refine((properties) => Object.keys(properties).length <= MAX_PARAMETERS, `at most ${MAX_PARAMETERS} parameters`),
    required: z.array(z.string()).max(MAX_PARAMETERS).optional(),
    additionalProperties: z.literal(false).optional().meta({ description: "Always false in effect: a parameter the schema does not declare is refused" }),
    ...described,
  })
  .meta({
    id: "PresetParameters",
    description:
      "A JSON Schema object: `properties` of type integer, number, string or boolean (with minimum/maximum, enum, pattern, minLength/maxLength, default, examples) and `required`. A parameter that is not required needs a `default`; a string parameter needs a `default`, `examples` or `enum`, so the command can be checked when it is saved.",
    example: { type: "object", properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, crf: { type: "integer", minimum: 0, maximum: 51, default: 23 } }, required: ["input"] },
  });
export type PresetParameters = z.infer<typeof PresetParametersSchema>;

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const presetFields = {
  name: z.string().regex(NAME, "a preset name is 1-64 lower-case letters, digits, '-' or '_', starting with a letter or digit").meta({ example: "web-720p" }),
  description: z.string().max(500).optional(),
  command: z.string().min(1).max(16_384).meta({ example: "ffmpeg -i {{input}} -vf scale=-2:720 -c:v libx264 -crf {{crf}} out.mp4" }),
  parameters: PresetParametersSchema,
};

const PRESET_DESTINATION = "A task from this preset delivers its outputs there (docs/destinations.md) unless the request names its own `destination`. One of your destinations, by id or name; it is kept as its id";

export const CreatePresetSchema = z
  .object({
    ...presetFields,
    parameters: PresetParametersSchema.optional().default({ type: "object", properties: {} }),
    destination: TaskDestinationSchema.optional().meta({ description: PRESET_DESTINATION }),
  })
  .meta({ id: "CreatePreset" });
export type PresetDefinition = z.output<typeof CreatePresetSchema>;

// Built from the fields without the default: a change that leaves `parameters` out keeps them.
export const UpdatePresetSchema = z
  .strictObject(
    { ...presetFields, destination: TaskDestinationSchema.nullable().meta({ description: `${PRESET_DESTINATION}. null: none` }) },
    { error: (issue) => (issue.code === "unrecognized_keys" ? `${issue.keys.map((key) => `'${key}'`).join(", ")} is not a field of a preset; the fields are name, description, command, parameters and destination` : undefined) },
  )
  .partial()
  .meta({ id: "UpdatePreset", description: "The fields to change; the preset as a whole is checked again" });
export type PresetChanges = z.output<typeof UpdatePresetSchema>;

const PRESET_EXAMPLE = {
  id: "pre_3f2a9c1b7d4e5f60718293a4", name: "web-720p", description: "H.264 for the web",
  command: "ffmpeg -i {{input}} -vf scale=-2:720 -c:v libx264 -crf {{crf}} out.mp4",
  parameters: { type: "object", properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, crf: { type: "integer", minimum: 0, maximum: 51, default: 23 } }, required: ["input"] },
  destination: null, builtin: false, created_at: "2026-11-26T10:00:00.000Z", updated_at: "2026-11-26T10:00:00.000Z",
};

export const PresetSchema = z
  .object({
    id: z.string().meta({ description: "pre_ and 24 hex digits; a built-in preset's id is its name" }),
    name: z.string(),
    description: z.string().nullable(),
    command: z.string(),
    parameters: PresetParametersSchema,
    destination: TaskDestinationSchema.nullable().meta({ description: "Where a task from this preset delivers its outputs unless the request names a destination; null: none (always, for a built-in preset)" }),
    builtin: z.boolean().meta({ description: "A built-in preset: available to everyone, read-only" }),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: "Preset", example: PRESET_EXAMPLE });
export type Preset = z.infer<typeof PresetSchema>;

export const ListPresetsQuerySchema = z.object({
  builtin: z.enum(["true", "false"]).optional().transform((value) => (value === undefined ? undefined : value === "true")).meta({ description: "Only the built-in presets (`true`) or only yours (`false`)" }),
  limit: decimalInteger(1, 100).optional().default(50),
  offset: decimalInteger(0, 1_000_000_000).optional().default(0),
});

export const PresetListSchema = z
  .object({ total: z.number().int(), presets: z.array(PresetSchema) })
  .meta({ id: "PresetList", description: "The built-in presets, then yours, each by name", example: { total: 8, presets: [PRESET_EXAMPLE] } });

/** `{preset}` in paths: a preset's id or name. */
export const PresetParamSchema = z.object({ preset: z.string().min(1).max(64).meta({ param: { name: "preset", in: "path" }, example: "web-720p" }) });

export const ExpandPresetSchema = z
  .object({ params: z.record(z.string(), z.unknown()).optional().default({}).meta({ example: { video: "https://example.com/in.mp4", width: 320 } }) })
  .meta({ id: "ExpandPreset" });

export const ExpandedPresetSchema = z
  .object({
    command: z.string().meta({ description: "The command a task would run: the preset's, with the values in place, quoted so each value stays one argument" }),
    inputs: z.array(z.string()),
    outputs: z.array(z.string()),
  })
  .meta({
    id: "ExpandedPreset",
    example: { command: "ffmpeg -ss 1 -i https://example.com/in.mp4 -frames:v 1 -vf scale=320:-2 thumbnail.jpg", inputs: ["https://example.com/in.mp4"], outputs: ["thumbnail.jpg"] },
  });
