import { type HttpOptions, request, requestJson } from "./http.js";
import type { CreatePreset, ExpandedPreset, Preset, PresetList, UpdatePreset } from "./types.js";

type Signal = { signal?: AbortSignal };

const path = (preset: string) => `/v1/presets/${encodeURIComponent(preset)}`;

/** `ff.presets`: saved command templates with typed parameters, the built-in ones listed first. */
export function presetsResource(http: HttpOptions) {
  return {
    /** A page of presets: the built-in ones, then yours (`builtin: true` or `false` for only one kind). */
    list: (query: { builtin?: boolean; limit?: number; offset?: number } & Signal = {}): Promise<PresetList> => {
      const { signal, ...params } = query;
      return requestJson(http, `/v1/presets${queryString(params)}`, { signal });
    },
    /** One preset by id or name (a built-in's id is its name). */
    get: (preset: string, options: Signal = {}): Promise<Preset> => requestJson(http, path(preset), options),
    /** Saves a preset; the service checks its command against the policy with its parameters' examples or defaults. */
    create: (preset: CreatePreset, options: Signal = {}): Promise<Preset> =>
      requestJson(http, "/v1/presets", { json: preset, ...options }),
    /** Changes the fields given; the preset as a whole is checked again. */
    update: (preset: string, changes: UpdatePreset, options: Signal = {}): Promise<Preset> => requestJson(http, path(preset), { method: "PATCH", json: changes, ...options }),
    delete: async (preset: string, options: Signal = {}): Promise<void> => {
      await request(http, path(preset), { method: "DELETE", ...options });
    },
    /** The command a task would run with these values, without running it; wrong values reject with PRESET_PARAMS_INVALID. */
    expand: (preset: string, params: Record<string, unknown> = {}, options: Signal = {}): Promise<ExpandedPreset> =>
      requestJson(http, `${path(preset)}/expand`, { json: { params }, idempotent: true, ...options }),
  };
}

export function queryString(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}
