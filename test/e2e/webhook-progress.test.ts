import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { WebhookEventSchema } from "../../shared/schemas/webhooks";
import { registerEndpoint, submitTask, useStackWithClip, waitForEnd } from "./helpers";
import { type ReceivedRequest, WebhookReceiver } from "./webhook-receiver";

const ctx = useStackWithClip({ seconds: 20, size: "640x360" });
const receiver = WebhookReceiver.forFile();

function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
}

async function until(done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("task.progress on the local stack", () => {
  it("reaches a subscribed endpoint signed and with rising progress, then exactly one task.completed and nothing after; an endpoint subscribed to the end only gets no progress", async () => {
    const both = await registerEndpoint(ctx, { url: receiver.url("/progress-and-end"), events: ["task.progress", "task.completed"] });
    await registerEndpoint(ctx, { url: receiver.url("/end-only"), events: ["task.completed"] });

    const response = await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -c:v libx264 -preset veryslow -crf 30 small.mp4` });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id, 240_000);
    expect(task.status, task.error).toBe("completed");

    await until(() => receiver.received("/progress-and-end").some((request) => request.headers["webhook-event"] === "task.completed"));
    await until(() => receiver.received("/end-only").length > 0);
    // Anything late would arrive within this.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    const requests = receiver.received("/progress-and-end");
    const types = requests.map((request) => request.headers["webhook-event"]);
    expect(types.filter((type) => type === "task.completed")).toHaveLength(1);
    expect(types.at(-1)).toBe("task.completed");
    const progress = requests.filter((request) => request.headers["webhook-event"] === "task.progress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    const events = progress.map((request) => WebhookEventSchema.parse(new Webhook(both.secret).verify(request.body, headersOf(request))));
    for (const event of events) expect(event).toMatchObject({ task_id, status: "running" });
    const points = events.map((event) => event.progress);
    expect(points).toEqual([...points].sort((a, b) => a - b));
    expect(new Set(points).size).toBe(points.length);
    expect(progress.map((request) => request.headers["webhook-id"])).toEqual(progress.map((_request, index) => `msg_${task_id}_progress_${index + 1}`));
    expect(() => new Webhook(both.secret).verify(requests.at(-1)!.body, headersOf(requests.at(-1)!))).not.toThrow();

    expect(receiver.received("/end-only").map((request) => request.headers["webhook-event"])).toEqual(["task.completed"]);
  });
});
