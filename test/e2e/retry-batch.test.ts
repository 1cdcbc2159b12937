import { join } from "node:path";
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { probe } from "../../scripts/lib/media";
import { authed } from "../../scripts/lib/local-stack";
import { useStackWithClip, waitForEnd } from "./helpers";

const ctx = useStackWithClip({ seconds: 4, size: "320x180" });

function post(path: string, body?: unknown): Promise<Response> {
  return ctx.stack.fetch(path, authed(ctx.user.key, { method: "POST", ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) }));
}

describe("batch and retry on the real stack", () => {
  it("runs a batch of three tasks to completion, then a retry of one as a new task that completes too", async () => {
    const names = ["first.mp4", "second.mp4", "third.mp4"];
    const response = await post("/v1/tasks/batch", { tasks: names.map((name, index) => ({ command: `ffmpeg -i ${ctx.clipUrl} -t ${index + 1} -c:v libx264 -preset ultrafast ${name}` })) });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { created: number; results: { index: number; task_id: string }[] };
    expect(answer.created).toBe(3);

    const ends = await Promise.all(answer.results.map((result) => waitForEnd(ctx.stack, ctx.user.key, result.task_id, 90_000)));
    for (const [index, { task }] of ends.entries()) {
      expect(task.status, task.error).toBe("completed");
      expect(task.outputs?.map((output) => output.filename)).toEqual([names[index]]);
      const path = join(ctx.dir, `batch-${names[index]}`);
      await writeFile(path, new Uint8Array(await (await fetch(task.outputs![0]!.url)).arrayBuffer()));
      expect(Number((await probe(path)).format.duration)).toBeCloseTo(index + 1, 0);
    }

    const original = answer.results[1]!.task_id;
    const retried = await post(`/v1/tasks/${original}/retry`);
    expect(retried.status).toBe(201);
    const { task_id, retry_of } = (await retried.json()) as { task_id: string; retry_of: string };
    expect(retry_of).toBe(original);
    expect(task_id).not.toBe(original);
    expect(retried.headers.get("location")).toBe(`/v1/tasks/${task_id}`);
    const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id, 90_000);
    expect(task.status, task.error).toBe("completed");
    expect(task.outputs?.map((output) => output.filename)).toEqual(["second.mp4"]);
    expect(task.outputs![0]!.url).not.toBe(ends[1]!.task.outputs![0]!.url);
  }, 240_000);
});
