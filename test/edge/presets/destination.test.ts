import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { createDestination } from "../../../edge/destinations/manage";
import { findTaskById } from "../../../edge/tasks/repository";
import { expectProblem } from "../../helpers/problems";
import { destinationBody } from "../destinations/fixtures";
import { api, createUser, postJson } from "../helpers";

const PRESET = {
  name: "to-bucket",
  command: "ffmpeg -i {{input}} -t 2 out.mp4",
  parameters: { type: "object", properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] } }, required: ["input"] },
};
const PARAMS = { input: "https://example.com/clip.mp4" };

type PresetBody = { id: string; name: string; destination: { id: string; mode: string } | null };

async function userWithDestination() {
  const user = await createUser();
  const destination = await createDestination(env, user.userId, CreateDestinationSchema.parse(destinationBody()));
  return { ...user, destination };
}

async function saved(key: string, body: Record<string, unknown>): Promise<PresetBody> {
  const response = await postJson("/v1/presets", key, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json<PresetBody>();
}

const patch = (path: string, key: string, body: unknown) => api(path, key, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function taskDestination(key: string, body: Record<string, unknown>): Promise<unknown> {
  const response = await postJson("/v1/tasks", key, body);
  expect(response.status, await response.clone().text()).toBe(201);
  const row = await findTaskById(env.DB, (await response.json<{ task_id: string }>()).task_id);
  return row!.destination ? JSON.parse(row!.destination) : null;
}

describe("a preset's destination", () => {
  it("is saved by name as the destination's id and mode, shown on the preset, and none on a built-in one", async () => {
    const { key, destination } = await userWithDestination();
    const preset = await saved(key, { ...PRESET, destination: { id: destination.name, mode: "only" } });
    expect(preset.destination).toEqual({ id: destination.id, mode: "only" });
    expect((await (await api(`/v1/presets/${preset.id}`, key)).json<PresetBody>()).destination).toEqual({ id: destination.id, mode: "only" });
    expect((await (await api("/v1/presets/thumbnail", key)).json<PresetBody>()).destination).toBeNull();
  });

  it.each([
    ["an unknown destination", async () => "no-such-destination"],
    ["another user's destination", async () => (await userWithDestination()).destination.id],
  ])("refuses %s with 400 DESTINATION_NOT_FOUND when saved or changed, and saves nothing", async (_case, named) => {
    const { key, destination } = await userWithDestination();
    const id = await named();
    const problem = await expectProblem(await postJson("/v1/presets", key, { ...PRESET, destination: { id } }), 400, "DESTINATION_NOT_FOUND");
    expect(problem.destination).toBe(id);
    expect((await api(`/v1/presets/${PRESET.name}`, key)).status).toBe(404);
    const preset = await saved(key, { ...PRESET, destination: { id: destination.id } });
    await expectProblem(await patch(`/v1/presets/${preset.id}`, key, { destination: { id } }), 400, "DESTINATION_NOT_FOUND");
    expect((await (await api(`/v1/presets/${preset.id}`, key)).json<PresetBody>()).destination).toEqual({ id: destination.id, mode: "copy" });
  });

  it("is used by a task from the preset, unless the request names its own", async () => {
    const { key, userId, destination } = await userWithDestination();
    const other = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    await saved(key, { ...PRESET, destination: { id: destination.id, mode: "only" } });
    expect(await taskDestination(key, { preset: PRESET.name, params: PARAMS })).toEqual({ id: destination.id, mode: "only" });
    expect(await taskDestination(key, { preset: PRESET.name, params: PARAMS, destination: { id: other.name } })).toEqual({ id: other.id, mode: "copy" });
  });

  it("is checked again when a task runs the preset: gone since, the task is refused with 400 DESTINATION_NOT_FOUND and not created", async () => {
    const { key, userId, destination } = await userWithDestination();
    await saved(key, { ...PRESET, destination: { id: destination.id } });
    await env.DB.prepare("DELETE FROM destinations WHERE id = ?").bind(destination.id).run();
    const problem = await expectProblem(await postJson("/v1/tasks", key, { preset: PRESET.name, params: PARAMS }), 400, "DESTINATION_NOT_FOUND");
    expect(problem.destination).toBe(destination.id);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<number>("n")).toBe(0);
  });

  it("is changed and cleared by PATCH, other fields keeping it", async () => {
    const { key, userId, destination } = await userWithDestination();
    const other = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    const preset = await saved(key, { ...PRESET, destination: { id: destination.id } });
    const described = await (await patch(`/v1/presets/${preset.id}`, key, { description: "kept" })).json<PresetBody>();
    expect(described.destination).toEqual({ id: destination.id, mode: "copy" });
    expect((await (await patch(`/v1/presets/${preset.id}`, key, { destination: { id: other.name, mode: "only" } })).json<PresetBody>()).destination).toEqual({ id: other.id, mode: "only" });
    expect((await (await patch(`/v1/presets/${preset.id}`, key, { destination: null })).json<PresetBody>()).destination).toBeNull();
    expect(await taskDestination(key, { preset: preset.id, params: PARAMS })).toBeNull();
  });

  it("keeps its destination from being deleted (409 DESTINATION_IN_USE naming the presets) until no preset names it", async () => {
    const { key, destination } = await userWithDestination();
    await saved(key, { ...PRESET, destination: { id: destination.id } });
    await saved(key, { ...PRESET, name: "also-to-bucket", destination: { id: destination.name } });
    const problem = await expectProblem(await api(`/v1/destinations/${destination.id}`, key, { method: "DELETE" }), 409, "DESTINATION_IN_USE");
    expect(problem.presets).toEqual(["also-to-bucket", "to-bucket"]);
    expect((await api(`/v1/destinations/${destination.id}`, key)).status).toBe(200);
    await patch("/v1/presets/to-bucket", key, { destination: null });
    expect((await api("/v1/presets/also-to-bucket", key, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/v1/destinations/${destination.id}`, key, { method: "DELETE" })).status).toBe(204);
  });
});
