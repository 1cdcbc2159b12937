import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../../edge/app";
import { signToken } from "../../../edge/lib/signed-token";
import { api, createUser, postJson } from "../helpers";

/** An input as owners share them: a presigned URL whose query string is the credential. */
const COMMAND = "ffmpeg -i 'https://storage.example.com/in.mp4?X-Amz-Signature=SIGNATURE0secret' -t 2 out.mp4";
/** What must never reach a reader without the owner's key: the command's URL, ffmpeg's messages and log. */
const SECRETS = ["storage.example.com", "SIGNATURE0secret", "ERROR0secret", "LOG0secret"];

/** A failed task with its command, error and log stored, as a stranger holding its id would target it. */
async function ownedTask(): Promise<{ taskId: string; userId: string }> {
  const { key, userId } = await createUser();
  const { task_id: taskId } = await (await postJson("/v1/tasks", key, { command: COMMAND })).json<{ task_id: string }>();
  const token = await signToken(env.SIGNING_SECRET, "callback", { t: taskId, r: 0, u: userId }, 3600);
  await postJson(`/internal/tasks/${taskId}/events`, token, { type: "started", seq: 0 });
  const failed = await postJson(`/internal/tasks/${taskId}/events`, token, {
    type: "failed", seq: 1, error_code: "FFMPEG_FAILED", error: "ffmpeg exited with code 1: ERROR0secret from https://storage.example.com/in.mp4", log: "LOG0secret",
  });
  expect(failed.status).toBe(200);
  return { taskId, userId };
}

/** Every path the Worker routes, with its parameters filled in with the task's id (the CDN's with its keys). */
function pathsFor(taskId: string, userId: string): string[] {
  const paths = new Set<string>();
  for (const route of buildApp().routes) {
    if (!["GET", "ALL"].includes(route.method) || route.path.includes("/console")) continue;
    const filled = route.path
      .replace(/:area\{[^}]*\}\/\*/, "outputs/*")
      .replace(/:[A-Za-z_]+(\{[^}]*\})?/g, taskId)
      .replace(/\*$/, `${userId}/${taskId}/out.mp4`);
    paths.add(filled);
  }
  // The log under every spelling a CDN key could take.
  for (const log of [`/logs/${userId}/${taskId}.log`, `/outputs/../logs/${userId}/${taskId}.log`, `/outputs/%2e%2e/logs/${userId}/${taskId}.log`, `/outputs/${userId}/${taskId}/..%2f..%2f..%2flogs%2f${userId}%2f${taskId}.log`]) paths.add(log);
  return [...paths];
}

describe("reads without a key", () => {
  it("never show a task's command, its inputs, ffmpeg's messages or its log, whatever the route", async () => {
    const { taskId, userId } = await ownedTask();
    const paths = pathsFor(taskId, userId);
    expect(paths).toContain(`/v1/tasks/${taskId}`);
    expect(paths).toContain(`/v1/tasks/${taskId}/events`);
    expect(paths).toContain(`/v1/tasks/${taskId}/logs`);
    const leaks: string[] = [];
    for (const path of paths) {
      for (const headers of [{}, { upgrade: "websocket", connection: "Upgrade" }, { accept: "text/event-stream" }] as Record<string, string>[]) {
        const response = await api(path, undefined, { headers });
        response.webSocket?.accept();
        response.webSocket?.close();
        const text = response.webSocket ? "" : await response.text();
        for (const secret of SECRETS) if (text.includes(secret)) leaks.push(`${path} ${JSON.stringify(headers)} → ${response.status} shows ${secret}`);
      }
    }
    expect(leaks).toEqual([]);
    // The one key-less read there is: FFHub's status poll.
    expect((await api(`/v1/tasks/${taskId}`, undefined)).status).toBe(200);
  });
});
