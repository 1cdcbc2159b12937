import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { WebhookEventSchema } from "../../shared/schemas/webhooks";
import { authed } from "../../scripts/lib/local-stack";
import { getTask, registerEndpoint, submitTask, useStackWithClip, waitForEnd } from "./helpers";
import { type ReceivedRequest, WebhookReceiver } from "./webhook-receiver";

const ctx = useStackWithClip({ seconds: 2 }, { edgeVars: { WEBHOOK_TIMEOUT_SECONDS: "2", WEBHOOK_RETRY_SCHEDULE_SECONDS: "1" } });
const receiver = WebhookReceiver.forFile();

function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
}

describe("registered webhook endpoints on the local stack", () => {
  it("deliver task.completed of a task submitted without a webhook, signed with the secret returned at registration", async () => {
    const endpoint = await registerEndpoint(ctx, { url: receiver.script("/subscribed", [{ status: 500 }, { status: 200 }]), events: ["task.completed"] });
    const failedOnly = await registerEndpoint(ctx, { url: receiver.url("/failed-only"), events: ["task.failed"] });
    const disabled = await registerEndpoint(ctx, { url: receiver.url("/disabled"), events: ["task.completed"], enabled: false });

    const response = await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy out.mp4` });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id, 30_000);
    expect(task.status, task.error).toBe("completed");

    // The first attempt is answered 500; the retry a second later is delivered.
    const requests = await receiver.receivedUntil("/subscribed", 2);
    for (const request of requests) {
      expect(request.headers["webhook-id"]).toBe(`msg_${task_id}_completed`);
      expect(request.headers["webhook-event"]).toBe("task.completed");
      const event = WebhookEventSchema.parse(new Webhook(endpoint.secret).verify(request.body, headersOf(request)));
      expect(event).toEqual(await getTask(ctx.stack, ctx.user.key, task_id));
    }
    expect(receiver.received("/failed-only")).toEqual([]);
    expect(receiver.received("/disabled")).toEqual([]);

    type Log = { events: { event_id: string; delivered: boolean; attempts: { status_code: number }[] }[] };
    const logOf = async (id: string) => (await (await ctx.stack.fetch(`/v1/webhooks/endpoints/${id}/deliveries`, authed(ctx.user.key))).json()) as Log;
    let log = await logOf(endpoint.id);
    for (const deadline = Date.now() + 10_000; !log.events[0]?.delivered && Date.now() < deadline; log = await logOf(endpoint.id)) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({ event_id: `msg_${task_id}_completed`, delivered: true });
    expect(log.events[0]!.attempts.map((attempt) => attempt.status_code)).toEqual([500, 200]);
    for (const other of [failedOnly, disabled]) {
      expect((await logOf(other.id)).events).toEqual([]);
    }
  }, 90_000);
});
