import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, postJson } from "../helpers";
import { expectProblem } from "../../helpers/problems";

const WEB = {
  name: "web-720p",
  description: "720p H.264",
  command: "ffmpeg -i {{input}} -vf scale={{width}}:-2 -c:v libx264 -crf {{crf}} out.mp4",
  parameters: {
    type: "object",
    properties: {
      input: { type: "string", examples: ["https://example.com/in.mp4"] },
      width: { type: "integer", minimum: 16, maximum: 8192, default: 1280 },
      crf: { type: "integer", minimum: 0, maximum: 51, default: 23 },
    },
    required: ["input"],
  },
};
const URL = "https://example.com/clip.mp4";

type PresetBody = { id: string; name: string; builtin: boolean; command: string; created_at: string | null };

async function savedPreset(key: string, body: Record<string, unknown> = WEB): Promise<PresetBody> {
  const response = await postJson("/v1/presets", key, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json<PresetBody>();
}

const patch = (path: string, key: string, body: unknown) => api(path, key, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const taskCount = async (userId: string) => (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<{ n: number }>())!.n;

describe("POST /v1/presets", () => {
  it("saves a preset and answers 201 with it, its id and a Location", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/presets", key, WEB);
    expect(response.status).toBe(201);
    const preset = await response.json<PresetBody>();
    expect(preset).toMatchObject({ id: expect.stringMatching(/^pre_[0-9a-f]{24}$/), name: "web-720p", builtin: false, command: WEB.command, parameters: WEB.parameters, created_at: expect.any(String) });
    expect(response.headers.get("location")).toBe(`/v1/presets/${preset.id}`);
  });

  it.each([
    ["no name", { ...WEB, name: undefined }],
    ["a name with capitals", { ...WEB, name: "Web" }],
    ["a name that reads as an id", { ...WEB, name: "pre_0123456789abcdef01234567" }],
    ["a keyword outside the subset", { ...WEB, parameters: { ...WEB.parameters, properties: { ...WEB.parameters.properties, crf: { type: "integer", multipleOf: 2, default: 22 } } } }],
    ["an unknown placeholder", { ...WEB, command: `${WEB.command} -preset {{speed}}` }],
    ["a command the policy refuses", { ...WEB, command: "ffmpeg -f lavfi -i {{input}} -vf scale={{width}}:-2 -crf {{crf}} out.mp4" }],
  ])("refuses %s with 400 PRESET_INVALID, saving nothing", async (_, body) => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/v1/presets", key, body), 400, "PRESET_INVALID");
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM presets WHERE user_id = ?").bind(userId).first<{ n: number }>())!.n).toBe(0);
  });

  it("refuses a name the user has already, and a built-in preset's name, with 409 PRESET_NAME_TAKEN", async () => {
    const { key } = await createUser();
    await savedPreset(key);
    await expectProblem(await postJson("/v1/presets", key, WEB), 409, "PRESET_NAME_TAKEN");
    await expectProblem(await postJson("/v1/presets", key, { ...WEB, name: "thumbnail" }), 409, "PRESET_NAME_TAKEN");
  });

  it("lets two users use the same name", async () => {
    await savedPreset((await createUser()).key);
    await savedPreset((await createUser()).key);
  });

  it("answers 401 without a key", async () => {
    await expectProblem(await postJson("/v1/presets", undefined, WEB), 401, "UNAUTHORIZED");
  });
});

describe("GET /v1/presets", () => {
  it("lists the built-in presets first, then the user's by name, in pages", async () => {
    const { key } = await createUser();
    await savedPreset(key, { ...WEB, name: "zz-last" });
    await savedPreset(key, { ...WEB, name: "aa-first" });
    const all = await (await api("/v1/presets", key)).json<{ total: number; presets: PresetBody[] }>();
    expect(all.total).toBe(9);
    expect(all.presets.map((preset) => preset.name)).toEqual(["thumbnail", "gif", "hls-ladder", "audio-extract", "trim", "watermark", "subtitles-burn-in", "aa-first", "zz-last"]);
    expect(all.presets.map((preset) => preset.builtin)).toEqual([true, true, true, true, true, true, true, false, false]);
    const page = await (await api("/v1/presets?limit=2&offset=6", key)).json<{ total: number; presets: PresetBody[] }>();
    expect(page).toMatchObject({ total: 9, presets: [{ name: "subtitles-burn-in" }, { name: "aa-first" }] });
    const own = await (await api("/v1/presets?builtin=false", key)).json<{ total: number; presets: PresetBody[] }>();
    expect(own.presets.map((preset) => preset.name)).toEqual(["aa-first", "zz-last"]);
    expect((await (await api("/v1/presets?builtin=true", key)).json<{ total: number }>()).total).toBe(7);
  });

  it("never lists another user's presets", async () => {
    await savedPreset((await createUser()).key, { ...WEB, name: "theirs" });
    const { key } = await createUser();
    expect((await (await api("/v1/presets?builtin=false", key)).json<{ total: number }>()).total).toBe(0);
  });
});

describe("GET, PATCH and DELETE /v1/presets/{preset}", () => {
  it("finds a preset by id and by name, and a built-in one by name", async () => {
    const { key } = await createUser();
    const saved = await savedPreset(key);
    expect(await (await api(`/v1/presets/${saved.id}`, key)).json()).toEqual(saved);
    expect(await (await api("/v1/presets/web-720p", key)).json()).toEqual(saved);
    expect(await (await api("/v1/presets/thumbnail", key)).json()).toMatchObject({ id: "thumbnail", builtin: true, created_at: null });
  });

  it("answers 404 PRESET_NOT_FOUND for another user's preset", async () => {
    const saved = await savedPreset((await createUser()).key);
    const { key } = await createUser();
    await expectProblem(await api(`/v1/presets/${saved.id}`, key), 404, "PRESET_NOT_FOUND");
    await expectProblem(await patch(`/v1/presets/${saved.id}`, key, { description: "mine now" }), 404, "PRESET_NOT_FOUND");
    await expectProblem(await api(`/v1/presets/${saved.id}`, key, { method: "DELETE" }), 404, "PRESET_NOT_FOUND");
  });

  it("changes the fields given and checks the preset again as a whole", async () => {
    const { key } = await createUser();
    const saved = await savedPreset(key);
    const response = await patch("/v1/presets/web-720p", key, { name: "web-small", description: "smaller" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: saved.id, name: "web-small", description: "smaller", command: WEB.command, created_at: saved.created_at });
    await expectProblem(await patch(`/v1/presets/${saved.id}`, key, { command: "ffmpeg -i {{input}} -crf {{crf}} out.mp4" }), 400, "PRESET_INVALID");
    expect(await (await api(`/v1/presets/${saved.id}`, key)).json()).toMatchObject({ name: "web-small", command: WEB.command });
  });

  it("refuses a rename onto another of the user's presets with 409", async () => {
    const { key } = await createUser();
    await savedPreset(key);
    const other = await savedPreset(key, { ...WEB, name: "other" });
    await expectProblem(await patch(`/v1/presets/${other.id}`, key, { name: "web-720p" }), 409, "PRESET_NAME_TAKEN");
  });

  it("refuses to change or delete a built-in preset with 403 PRESET_READ_ONLY", async () => {
    const { key } = await createUser();
    await expectProblem(await patch("/v1/presets/thumbnail", key, { description: "mine" }), 403, "PRESET_READ_ONLY");
    await expectProblem(await api("/v1/presets/thumbnail", key, { method: "DELETE" }), 403, "PRESET_READ_ONLY");
  });

  it("deletes a preset: 204, then 404", async () => {
    const { key } = await createUser();
    const saved = await savedPreset(key);
    expect((await api(`/v1/presets/${saved.id}`, key, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api(`/v1/presets/${saved.id}`, key), 404, "PRESET_NOT_FOUND");
  });

  it("goes with its user when the account is deleted", async () => {
    const { key, userId } = await createUser();
    await savedPreset(key);
    await env.DB.batch([env.DB.prepare("DELETE FROM api_keys WHERE user_id = ?").bind(userId), env.DB.prepare("DELETE FROM users WHERE id = ?").bind(userId)]);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM presets WHERE user_id = ?").bind(userId).first<{ n: number }>())!.n).toBe(0);
  });
});

describe("POST /v1/tasks with a preset", () => {
  it("runs the user's preset by name or id and stores the expanded command", async () => {
    const { key } = await createUser();
    const saved = await savedPreset(key);
    for (const preset of ["web-720p", saved.id]) {
      const response = await postJson("/v1/tasks", key, { preset, params: { input: URL, crf: 30 } });
      expect(response.status, await response.clone().text()).toBe(201);
      const { task_id } = await response.json<{ task_id: string }>();
      expect(await (await api(`/v1/tasks/${task_id}`, key)).json()).toMatchObject({ command: `ffmpeg -i ${URL} -vf scale=1280:-2 -c:v libx264 -crf 30 out.mp4` });
    }
  });

  it("runs a built-in preset", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/tasks", key, { preset: "thumbnail", params: { video: URL, width: 320 } });
    expect(response.status).toBe(201);
    const { task_id } = await response.json<{ task_id: string }>();
    expect(await (await api(`/v1/tasks/${task_id}`, key)).json()).toMatchObject({ command: `ffmpeg -ss 1 -i ${URL} -frames:v 1 -vf scale=320:-2 thumbnail.jpg` });
  });

  it.each([
    [{ preset: "web-720p", params: { input: URL, crf: 99 } }, 400, "PRESET_PARAMS_INVALID"],
    [{ preset: "web-720p", params: { crf: 20 } }, 400, "PRESET_PARAMS_INVALID"],
    [{ preset: "web-720p", params: { input: "-f lavfi" } }, 400, "PRESET_PARAMS_INVALID"],
    [{ preset: "web-720p", params: { input: "x -i file:///etc/passwd" } }, 400, "INPUT_NOT_ALLOWED"],
    [{ preset: "web-720p", params: { input: "http://169.254.169.254/latest/meta-data/in.mp4" } }, 400, "URL_HOST_BLOCKED"],
    [{ preset: "no-such-preset", params: {} }, 404, "PRESET_NOT_FOUND"],
    [{ preset: "web-720p", command: "ffmpeg -i https://example.com/a.mp4 o.mp4" }, 400, "VALIDATION_FAILED"],
    [{ command: "ffmpeg -i https://example.com/a.mp4 o.mp4", params: { input: URL } }, 400, "VALIDATION_FAILED"],
    [{ with_metadata: true }, 400, "VALIDATION_FAILED"],
  ])("refuses %j with %i %s, recording no task", async (body, status, code) => {
    const { key, userId } = await createUser();
    await savedPreset(key);
    await expectProblem(await postJson("/v1/tasks", key, body), status, code);
    expect(await taskCount(userId)).toBe(0);
  });

  it("names the parameter at fault", async () => {
    const { key } = await createUser();
    await savedPreset(key);
    const problem = await expectProblem(await postJson("/v1/tasks", key, { preset: "web-720p", params: { input: URL, crf: 52 } }), 400, "PRESET_PARAMS_INVALID");
    expect(problem).toMatchObject({ param: "crf", preset: "web-720p", detail: "params.crf: must be ≤ 51." });
  });

  it("cannot run another user's preset", async () => {
    const saved = await savedPreset((await createUser()).key);
    const { key } = await createUser();
    await expectProblem(await postJson("/v1/tasks", key, { preset: saved.id, params: { input: URL } }), 404, "PRESET_NOT_FOUND");
  });
});

describe("POST /v1/presets/{preset}/expand", () => {
  it("answers the command a task would run, its inputs and outputs, recording nothing", async () => {
    const { key, userId } = await createUser();
    const response = await postJson("/v1/presets/thumbnail/expand", key, { params: { video: "https://example.com/in.mp4?sig=a1&exp=9", width: 320 } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      command: "ffmpeg -ss 1 -i 'https://example.com/in.mp4?sig=a1&exp=9' -frames:v 1 -vf scale=320:-2 thumbnail.jpg",
      inputs: ["https://example.com/in.mp4?sig=a1&exp=9"],
      outputs: ["thumbnail.jpg"],
    });
    expect(await taskCount(userId)).toBe(0);
  });

  it("refuses values as POST /v1/tasks would", async () => {
    const { key } = await createUser();
    await expectProblem(await postJson("/v1/presets/thumbnail/expand", key, { params: { video: URL, width: 1 } }), 400, "PRESET_PARAMS_INVALID");
    await expectProblem(await postJson("/v1/presets/thumbnail/expand", key, { params: { video: "file:///etc/passwd" } }), 400, "INPUT_NOT_ALLOWED");
    await expectProblem(await postJson("/v1/presets/nope/expand", key, { params: {} }), 404, "PRESET_NOT_FOUND");
  });
});
