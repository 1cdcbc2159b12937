import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { seedFile } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { createUser, productionEnv } from "../helpers";

const API = "https://api.ffedge.net";
const CDN = "https://cdn.ffedge-user.net";
const CN_CDN = "https://cdn.ffedge-user.cn";
const WORKERS_DEV = "https://ffedge.someone.workers.dev";
const BODY = "host-separated file";

let key: string;
let fileKey: string;

beforeAll(async () => {
  const user = await createUser();
  key = user.key;
  fileKey = await seedFile(user.userId, { expiresAt: new Date(Date.now() + 3_600_000), body: BODY });
});

async function request(url: string, init: RequestInit = {}, target: Env = productionEnv()): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init), target, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const withKey = (): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

describe("production hosts", () => {
  it("serves the API, its description and the console on EDGE_URL's host", async () => {
    expect((await request(`${API}/v1/me`, withKey())).status).toBe(200);
    expect((await request(`${API}/openapi.json`)).status).toBe(200);
    expect((await request(`${API}/console/signin`)).status).toBe(200);
  });

  it("answers NOT_FOUND for files on the API's host, however the path is spelled", async () => {
    for (const path of [`/${fileKey}`, `/${fileKey.replace(/^uploads/, "%75ploads")}`, "/outputs/usr_x/tsk_x/out.mp4"]) {
      const body = await expectProblem(await request(`${API}${path}`), 404, "NOT_FOUND");
      expect(String(body.detail)).toContain(CDN);
    }
  });

  it.each([CDN, CN_CDN])("serves files on %s, byte for byte", async (origin) => {
    const response = await request(`${origin}/${fileKey}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(BODY);
  });

  it.each([CDN, CN_CDN])("answers NOT_FOUND for the API, the console and the callbacks on %s", async (origin) => {
    for (const [path, init] of [
      ["/v1/me", withKey()],
      ["/openapi.json", {}],
      ["/console/signin", {}],
      ["/console/api/auth/signin", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      ["/internal/tasks/tsk_x/events", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      ["/", {}],
    ] as [string, RequestInit][]) {
      const body = await expectProblem(await request(`${origin}${path}`, init), 404, "NOT_FOUND");
      expect(String(body.detail)).toContain(API);
    }
  });

  it("answers NOT_FOUND for everything on a hostname that is none of the three", async () => {
    await expectProblem(await request(`${WORKERS_DEV}/v1/me`, withKey()), 404, "NOT_FOUND");
    await expectProblem(await request(`${WORKERS_DEV}/${fileKey}`), 404, "NOT_FOUND");
  });

  it("takes a URL-backend transcoder's callbacks on EDGE_URL's host, as the job's callback_url names it", async () => {
    // Without a callback token: refused by the route's own check, which only runs once the host let the call through.
    await expectProblem(await request(`${API}/internal/tasks/tsk_x/events`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), 401, "UNAUTHORIZED");
  });
});

describe("development hosts", () => {
  it("serves every route group on every host, as the local stack needs", async () => {
    for (const origin of ["http://localhost:8787", "http://127.0.0.1:8787", API, CDN]) {
      expect((await request(`${origin}/v1/me`, withKey(), env)).status).toBe(200);
      const file = await request(`${origin}/${fileKey}`, {}, env);
      expect(file.status).toBe(200);
      expect(await file.text()).toBe(BODY);
    }
  });
});
