import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../../../scripts/lib/local-stack";
import { getTask, submitTask, waitForEnd } from "../../e2e/helpers";
import { type Host, TRIGGER_TYPE, WebhookServer, hook, host } from "./n8n-host";

/**
 * The trigger node's lifecycle through n8n-core's HookContext and WebhookContext: activation
 * registers an endpoint on the real local stack, a real task's end is delivered to the node's
 * webhook URL and emitted, forged deliveries are refused, deactivation deletes the endpoint.
 */
let stack: Stack;
let key: string;
let server: WebhookServer;
let trigger: Host;
let clipUrl: string;

type Endpoint = { id: string; url: string; events: string[]; enabled: boolean };

async function endpoints(): Promise<Endpoint[]> {
  return ((await (await stack.fetch("/v1/webhooks/endpoints", authed(key))).json()) as { endpoints: Endpoint[] }).endpoints;
}

async function until<T>(read: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { WEBHOOK_TIMEOUT_SECONDS: "2", WEBHOOK_RETRY_SCHEDULE_SECONDS: "1" } });
  ({ key } = await stack.createUser());
  clipUrl = (await uploadLocalFile(stack, key, await makeClip(await mediaDir(), "n8n-trigger.mp4", { seconds: 1, size: "160x120" }))).url;
  server = await new WebhookServer().listen();
  trigger = host(TRIGGER_TYPE, { events: ["task.completed", "task.failed"] }, { baseUrl: stack.edgeUrl, apiKey: key }, server.baseUrl);
  server.host = trigger;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

const staticData = () => trigger.workflow.getStaticData("node", trigger.node) as { endpointId?: string; secret?: string };
const webhookUrl = () => server.url(`${trigger.node.webhookId}/webhook`);

describe("the ffedge trigger", () => {
  it("on activation registers an endpoint for its webhook URL and keeps its id and secret in static data", async () => {
    expect(await hook(trigger, "checkExists")).toBe(false);
    expect(await hook(trigger, "create")).toBe(true);
    const { endpointId, secret } = staticData();
    expect(endpointId).toMatch(/^whe_/);
    expect(secret).toMatch(/^whsec_/);
    expect(await endpoints()).toEqual([expect.objectContaining({ id: endpointId, url: webhookUrl(), events: ["task.completed", "task.failed"], enabled: true })]);
    // n8n asks again at the next start: the same endpoint is found, nothing new is made.
    expect(await hook(trigger, "checkExists")).toBe(true);
  });

  it("emits the signed task.completed event of a real task", async () => {
    const response = await submitTask(stack, key, { command: `ffmpeg -i ${clipUrl} -t 0.5 -c copy cut.mp4` });
    const { task_id } = (await response.json()) as { task_id: string };
    const { task } = await waitForEnd(stack, key, task_id, 30_000);
    expect(task.status, task.error).toBe("completed");
    const emitted = await until(() => server.emitted.find((item) => item.task_id === task_id));
    expect(emitted).toMatchObject({ event: "task.completed", webhook_id: `msg_${task_id}_completed`, status: "completed" });
    const { event: _event, webhook_id: _id, ...body } = emitted;
    expect(body).toEqual(await getTask(stack, key, task_id));
  });

  it("answers 401 to a delivery signed with another secret, a changed body, a stale timestamp or no signature, and emits nothing", async () => {
    const before = server.emitted.length;
    const body = JSON.stringify({ task_id: "tsk_forged", status: "completed" });
    const now = Math.floor(Date.now() / 1000);
    const post = (headers: Record<string, string>, payload = body) =>
      fetch(webhookUrl(), { method: "POST", headers: { "content-type": "application/json", "webhook-event": "task.completed", ...headers }, body: payload });
    const other = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const { secret } = staticData();
    const id = "msg_tsk_forged_completed";
    expect((await post({ "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": sign(other, id, now, body) })).status).toBe(401);
    expect((await post({ "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": sign(secret!, id, now, body) }, body.replace("completed", "failed"))).status).toBe(401);
    expect((await post({ "webhook-id": id, "webhook-timestamp": String(now - 600), "webhook-signature": sign(secret!, id, now - 600, body) })).status).toBe(401);
    expect((await post({})).status).toBe(401);
    expect(server.emitted.length).toBe(before);
    // The same request, rightly signed, goes through: the refusals above are the signature's doing.
    expect((await post({ "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": sign(secret!, id, now, body) })).status).toBe(200);
    expect(server.emitted.at(-1)).toMatchObject({ task_id: "tsk_forged", event: "task.completed" });
  });

  it("replaces an endpoint it can no longer verify (static data lost) instead of adding a second one", async () => {
    const old = staticData().endpointId;
    delete staticData().endpointId;
    delete staticData().secret;
    expect(await hook(trigger, "checkExists")).toBe(false);
    expect(await hook(trigger, "create")).toBe(true);
    const list = await endpoints();
    expect(list).toHaveLength(1);
    expect(list[0]!.id).not.toBe(old);
    expect(list[0]!.id).toBe(staticData().endpointId);
  });

  it("subscribed to task.progress, emits signed progress events of a running task, rising, before its end", async () => {
    const progress = host(TRIGGER_TYPE, { events: ["task.progress"] }, { baseUrl: stack.edgeUrl, apiKey: key }, server.baseUrl);
    const previous = server.host;
    server.host = progress;
    try {
      expect(await hook(progress, "create")).toBe(true);
      const longer = (await uploadLocalFile(stack, key, await makeClip(await mediaDir(), "n8n-progress.mp4", { seconds: 12, size: "640x360" }))).url;
      const response = await submitTask(stack, key, { command: `ffmpeg -i ${longer} -c:v libx264 -preset veryslow -crf 30 slow.mp4` });
      const { task_id } = (await response.json()) as { task_id: string };
      const { task } = await waitForEnd(stack, key, task_id, 90_000);
      expect(task.status, task.error).toBe("completed");
      const events = await until(() => {
        const seen = server.emitted.filter((item) => item.task_id === task_id);
        return seen.length > 0 ? seen : undefined;
      });
      expect(events.every((item) => item.event === "task.progress" && item.status === "running")).toBe(true);
      // Latest wins: an event replaced before it was sent leaves a gap in the numbers, never a step back.
      const numbers = events.map((item) => Number(new RegExp(`^msg_${task_id}_progress_(\\d+)$`).exec(String(item.webhook_id))?.[1]));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(numbers.every((n) => n >= 1)).toBe(true);
      const values = events.map((item) => Number(item.progress));
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(values[0]).toBeGreaterThan(0);
    } finally {
      await hook(progress, "delete");
      server.host = previous;
    }
  }, 120_000);

  it("on deactivation deletes its endpoint and forgets it", async () => {
    const { endpointId } = staticData();
    expect(await hook(trigger, "delete")).toBe(true);
    expect(await endpoints()).toEqual([]);
    expect(staticData()).toEqual({});
    expect((await stack.fetch(`/v1/webhooks/endpoints/${endpointId}`, authed(key))).status).toBe(404);
    expect(await hook(trigger, "checkExists")).toBe(false);
  });
});
