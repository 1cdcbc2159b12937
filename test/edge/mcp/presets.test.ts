import { describe, expect, it } from "vitest";
import { api, createUser, postJson } from "../helpers";
import { callTool } from "./call-tool";

describe("MCP preset tools", () => {
  it("list_presets lists the built-in presets and the caller's own, with their parameters", async () => {
    const { key } = await createUser();
    const saved = await postJson("/v1/presets", key, {
      name: "tiny",
      command: "ffmpeg -i {{input}} -vf scale=160:-2 tiny.mp4",
      parameters: { type: "object", properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] } }, required: ["input"] },
    });
    expect(saved.status).toBe(201);
    const result = await callTool(key, "list_presets", {});
    expect(result.isError).toBeFalsy();
    const { total, presets } = result.structuredContent as { total: number; presets: { name: string; builtin: boolean; parameters: { properties: Record<string, unknown> } }[] };
    expect(total).toBe(8);
    expect(presets.map((preset) => preset.name)).toEqual(["thumbnail", "gif", "hls-ladder", "audio-extract", "trim", "watermark", "subtitles-burn-in", "tiny"]);
    expect(presets[0]!.parameters.properties).toHaveProperty("width");
    expect(result.content[0]!.text).toContain("thumbnail (built-in)");
  });

  it("run_preset submits a task with the values in place and returns it", async () => {
    const { key } = await createUser();
    const result = await callTool(key, "run_preset", { preset: "thumbnail", params: { video: "https://example.com/in.mp4", width: 200 }, wait_seconds: 0 });
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    const { task_id } = result.structuredContent as { task_id: string };
    expect(await (await api(`/v1/tasks/${task_id}`, key)).json()).toMatchObject({ command: "ffmpeg -ss 1 -i https://example.com/in.mp4 -frames:v 1 -vf scale=200:-2 thumbnail.jpg" });
  });

  it("run_preset answers a value that would add an option with a tool error naming the parameter, and runs nothing", async () => {
    const { key } = await createUser();
    const result = await callTool(key, "run_preset", { preset: "thumbnail", params: { video: "-f lavfi" }, wait_seconds: 0 });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/^PRESET_PARAMS_INVALID \(HTTP 400\): params\.video: /);
    expect((await (await api("/v1/tasks", key)).json<{ total: number }>()).total).toBe(0);
  });
});
