import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_PRESETS_PER_USER, insertPreset } from "../../../edge/presets/repository";
import { api, createUser, postJson } from "../helpers";
import { expectProblem } from "../../helpers/problems";

const CAPTION = {
  name: "caption",
  command: "ffmpeg -i {{input}} -vf drawtext=text={{t}}:fontsize=24 out.mp4",
  parameters: {
    type: "object",
    properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, t: { type: "string", maxLength: 100, default: "hello" } },
    required: ["input"],
  },
};
const URL = "https://example.com/clip.mp4";

async function saved(key: string, body: Record<string, unknown> = CAPTION): Promise<void> {
  const response = await postJson("/v1/presets", key, body);
  expect(response.status, await response.clone().text()).toBe(201);
}

describe("preset values over HTTP", () => {
  it("refuses the audit's option-adding drawtext value on POST /v1/tasks and /expand alike, naming the parameter and the preset", async () => {
    const { key } = await createUser();
    await saved(key);
    const params = { input: URL, t: "pwned:fontcolor=red:box=1:boxcolor=blue" };
    for (const response of [await postJson("/v1/tasks", key, { preset: "caption", params }), await postJson("/v1/presets/caption/expand", key, { params })]) {
      expect(await expectProblem(response, 400, "PRESET_PARAMS_INVALID")).toMatchObject({ param: "t", preset: "caption" });
    }
    expect(await expectProblem(await postJson("/v1/presets/caption/expand", key, { params: { input: URL, t: 5 } }), 400, "PRESET_PARAMS_INVALID")).toMatchObject({ param: "t", preset: "caption" });
  });

  it("names the parameter when the policy refuses the expanded command, on /expand and POST /v1/tasks", async () => {
    const { key } = await createUser();
    await saved(key);
    const params = { input: "http://169.254.169.254/latest/meta-data/x.mp4" };
    for (const response of [await postJson("/v1/presets/caption/expand", key, { params }), await postJson("/v1/tasks", key, { preset: "caption", params })]) {
      expect(await expectProblem(response, 400, "URL_HOST_BLOCKED")).toMatchObject({ param: "input", preset: "caption" });
    }
  });

  it("runs the thumbnail preset with at = 0.0000001, written without an exponent", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/presets/thumbnail/expand", key, { params: { video: URL, at: 0.0000001 } });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await response.json<{ command: string }>()).command).toContain("-ss 0.0000001 ");
  });
});

describe("strict preset bodies", () => {
  it("refuses PATCH with a field a preset does not have, naming it, and changes nothing", async () => {
    const { key } = await createUser();
    await saved(key);
    const response = await api("/v1/presets/caption", key, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ descr: "x" }) });
    const problem = await expectProblem(response, 400, "PRESET_INVALID");
    expect(problem.detail).toContain("'descr' is not a field of a preset");
    expect((await (await api("/v1/presets/caption", key)).json<{ description: string | null }>()).description).toBeNull();
  });

  it("explains '{{ width }}' as spaces inside the braces", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/presets", key, { ...CAPTION, command: "ffmpeg -i {{ input }} -vf drawtext=text={{t}} out.mp4" });
    const problem = await expectProblem(response, 400, "PRESET_INVALID");
    expect(problem).toMatchObject({ placeholder: "input" });
    expect(problem.detail).toContain("write {{input}}");
  });

  it(`answers 409 PRESET_LIMIT_REACHED for the preset after the ${MAX_PRESETS_PER_USER}th, and saves nothing`, async () => {
    const { key, userId } = await createUser();
    for (let i = 0; i < MAX_PRESETS_PER_USER; i++) {
      await insertPreset(env.DB, userId, { ...CAPTION, name: `p${i}`, parameters: CAPTION.parameters as never }, `pre_${i.toString(16).padStart(24, "0")}`, new Date().toISOString());
    }
    const problem = await expectProblem(await postJson("/v1/presets", key, { ...CAPTION, name: "one-more" }), 409, "PRESET_LIMIT_REACHED");
    expect(problem).toMatchObject({ limit: MAX_PRESETS_PER_USER });
    expect((await (await api("/v1/presets/one-more", key)).status)).toBe(404);
  });
});
