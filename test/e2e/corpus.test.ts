import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIO, IMAGE, REAL_WORLD_COMMANDS, SUBTITLES, VIDEO, VIDEO2 } from "../shared/ffmpeg/corpus";
import { makeAudio, makeClip, makeImage, mediaDir } from "../../scripts/lib/media";
import { type TaskBody, submitTask } from "./helpers";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";

const SRT = "1\n00:00:00,000 --> 00:00:01,500\nHello from ffedge\n\n2\n00:00:01,500 --> 00:00:02,000\nBye\n";

let stack: Stack;
let key: string;
const fixtures = new Map<string, string>();

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { MAX_RUNNING_TASKS_PER_USER: "100" } });
  ({ key } = await stack.createUser());
  const dir = await mediaDir();
  await writeFile(join(dir, "subs.srt"), SRT);
  const uploads: [string, string, string][] = [
    [VIDEO, await makeClip(dir, "video.mp4"), "video/mp4"],
    [VIDEO2, await makeClip(dir, "video2.mp4"), "video/mp4"],
    [AUDIO, await makeAudio(dir, "audio.wav"), "audio/wav"],
    [IMAGE, await makeImage(dir, "logo.png"), "image/png"],
    [SUBTITLES, join(dir, "subs.srt"), "application/x-subrip"],
  ];
  for (const [placeholder, path, type] of uploads) fixtures.set(placeholder, (await uploadLocalFile(stack, key, path, type)).url);
}, 120_000);

afterAll(() => stack?.stop());

function withFixtures(command: string): string {
  let result = command;
  for (const [placeholder, url] of fixtures) result = result.replaceAll(placeholder, url);
  return result;
}

/** Output names as the command writes them, turned into matchers (patterns match any number). */
function matcher(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/%0?\d*d/g, "\\d+").replace(/%v/g, "\\d+");
  return new RegExp(`^${escaped}$`);
}

describe(`the real-world corpus (${REAL_WORLD_COMMANDS.length} commands) on the real stack`, () => {
  it("accepts and runs every command, producing its outputs", async () => {
    const submitted = new Map<string, (typeof REAL_WORLD_COMMANDS)[number]>();
    for (const entry of REAL_WORLD_COMMANDS) {
      const response = await submitTask(stack, key, { command: withFixtures(entry.command) });
      expect(response.status, `${entry.name}: ${await response.clone().text()}`).toBe(201);
      submitted.set(((await response.json()) as { task_id: string }).task_id, entry);
    }
    // One listing call per poll instead of one per task keeps the key under its rate limit.
    const deadline = Date.now() + 240_000;
    let tasks: TaskBody[] = [];
    while (Date.now() < deadline) {
      const page = (await (await stack.fetch("/v1/tasks?limit=100", authed(key))).json()) as { tasks: TaskBody[] };
      tasks = page.tasks.filter((task) => submitted.has(task.task_id));
      if (tasks.length === submitted.size && tasks.every((task) => task.status === "completed" || task.status === "failed")) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const failures = tasks.filter((task) => task.status !== "completed").map((task) => `${submitted.get(task.task_id)!.name}: ${task.status} ${task.error_code ?? ""} ${task.error ?? ""}`);
    expect(failures).toEqual([]);
    for (const task of tasks) {
      const entry = submitted.get(task.task_id)!;
      const names = task.outputs!.map((output) => output.filename);
      for (const expected of entry.outputs) expect(names.some((name) => matcher(expected).test(name)), `${entry.name}: ${expected} in ${names.join(",")}`).toBe(true);
      for (const output of task.outputs!) expect(output.size, `${entry.name}: ${output.filename}`).toBeGreaterThan(0);
    }
    const sample = tasks[0]!.outputs![0]!;
    const download = await fetch(sample.url);
    expect((await download.arrayBuffer()).byteLength).toBe(sample.size);
  }, 300_000);
});
