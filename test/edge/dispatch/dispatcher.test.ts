import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { containerInputs, outcomeOf, taskIsOver } from "../../../edge/dispatch/dispatcher";
import { taskStub } from "../../../edge/lib/stubs";
import { insertTask } from "../../../edge/tasks/repository";
import { CONTAINER_EDGE_HOST } from "../../../shared/egress";
import { createUser } from "../helpers";

const answer = (status: number, body = "") => new Response(body || null, { status });

describe("a transcoder's answer to a job", () => {
  it("is an acceptance only when it is 202", async () => {
    expect(await outcomeOf(answer(202, '{"accepted":true}'), "http://t1")).toEqual({ kind: "accepted", target: "http://t1" });
  });

  it("is never an acceptance when it is a 409 refusal: that run already ran there, so it is stale", async () => {
    const outcome = await outcomeOf(answer(409, '{"code":"TASK_NOT_RUNNABLE"}'), "http://t1");
    expect(outcome).toMatchObject({ kind: "stale", detail: expect.stringContaining("TASK_NOT_RUNNABLE") });
  });

  it("is 'not now' for a transcoder short of work space (503), saying why: the task waits, it is neither lost nor failed", async () => {
    const problem = JSON.stringify({ status: 503, code: "TRANSCODER_BUSY", detail: "Short of work space: WORK_ROOT has 524288 bytes free, below MIN_FREE_WORK_BYTES (1048576)." });
    expect(await outcomeOf(answer(503, problem), "http://t1")).toEqual({ kind: "busy", detail: expect.stringContaining("Short of work space") });
  });

  it("is capacity for 429 and 503, a fault for other 5xx and a refusal for other 4xx", async () => {
    expect((await outcomeOf(answer(503), "http://t1")).kind).toBe("busy");
    expect((await outcomeOf(answer(429), "http://t1")).kind).toBe("busy");
    expect((await outcomeOf(answer(500), "http://t1")).kind).toBe("unreachable");
    expect((await outcomeOf(answer(400), "http://t1")).kind).toBe("rejected");
  });
});

describe("a job for a container", () => {
  it("points a command's own files (uploads, outputs) at the virtual host and leaves other URLs alone", () => {
    const base = env.PUBLIC_URL.replace(/\/+$/, "");
    const command = `ffmpeg -i ${base}/uploads/u1/a.mp4 -i ${base}/outputs/t1/b.mp4 -i https://example.com/uploads/c.mp4 -i ${base}/console/x out.mp4`;
    expect(containerInputs(env, command)).toBe(`ffmpeg -i https://${CONTAINER_EDGE_HOST}/uploads/u1/a.mp4 -i https://${CONTAINER_EDGE_HOST}/outputs/t1/b.mp4 -i https://example.com/uploads/c.mp4 -i ${base}/console/x out.mp4`);
  });
});

describe("whether a task is over, as the line and the pool ask it", () => {
  const meta = () => ({ task_id: `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`, user_id: `usr_${crypto.randomUUID()}`, created_at: new Date().toISOString() });

  async function startedTask() {
    const { userId } = await createUser();
    const task = { ...meta(), user_id: userId };
    await insertTask(env.DB, { id: task.task_id, user_id: userId, command: "ffmpeg -i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: null, created_at: task.created_at });
    await taskStub(env, task.task_id).init(task);
    return task.task_id;
  }

  it("is no while the task has not ended", async () => {
    expect(await taskIsOver(env, await startedTask())).toBe(false);
  });

  it("is yes once the task has ended, and for a task its object does not hold", async () => {
    const taskId = await startedTask();
    await taskStub(env, taskId).failTask("CANCELED", "Canceled by the user.");
    expect(await taskIsOver(env, taskId)).toBe(true);
    expect(await taskIsOver(env, meta().task_id)).toBe(true);
  });
});
