import { describe, expect, it } from "vitest";
import { expectProblem } from "../../helpers/problems";
import { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } from "../files/s3";
import { destinationBody } from "../destinations/fixtures";
import { api, createUser, postJson } from "../helpers";

type Destination = { id: string; name: string; prefix: string; path_style: boolean; endpoint: string | null; credentials_fingerprint: string };

async function created(key: string, overrides: Record<string, unknown> = {}): Promise<Destination> {
  const response = await postJson("/v1/destinations", key, destinationBody(overrides));
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json<Destination>();
}

function patchJson(path: string, key: string, body: unknown): Promise<Response> {
  return api(path, key, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("POST /v1/destinations", () => {
  it("answers 201 with the destination and a fingerprint of its credentials, never the credentials", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/destinations", key, destinationBody({ name: "archive" }));
    const text = await response.text();
    expect(response.status, text).toBe(201);
    expect(text).not.toContain(S3_SECRET_ACCESS_KEY);
    expect(text).not.toContain("secret_access_key");
    expect(text).not.toContain("access_key_id");
    const body = JSON.parse(text) as Destination;
    expect(body).toMatchObject({ name: "archive", path_style: true, credentials_fingerprint: expect.stringMatching(new RegExp(`^${S3_ACCESS_KEY_ID.slice(0, 4)}…[0-9a-f]{8}$`)) });
    expect(body.id).toMatch(/^dst_[0-9a-f]{24}$/);
  });

  it("refuses a second destination by the same name with DESTINATION_NAME_TAKEN", async () => {
    const { key } = await createUser();
    await created(key, { name: "same" });
    expect(await expectProblem(await postJson("/v1/destinations", key, destinationBody({ name: "same" })), 409, "DESTINATION_NAME_TAKEN")).toMatchObject({ name: "same" });
  });

  it("refuses a 21st destination with DESTINATION_LIMIT_REACHED and saves nothing", async () => {
    const { key } = await createUser();
    for (let index = 0; index < 20; index++) await created(key, { name: `bucket-${String(index).padStart(2, "0")}` });
    await expectProblem(await postJson("/v1/destinations", key, destinationBody({ name: "one-too-many" })), 409, "DESTINATION_LIMIT_REACHED");
    await expectProblem(await api("/v1/destinations/one-too-many", key), 404, "NOT_FOUND");
    expect(await (await api("/v1/destinations?limit=1", key)).json()).toMatchObject({ total: 20 });
  });

  it.each([
    ["a private address", { endpoint: "http://192.168.1.10" }, "URL_HOST_BLOCKED"],
    ["the metadata address", { endpoint: "http://169.254.169.254" }, "URL_HOST_BLOCKED"],
    ["an internal name", { endpoint: "https://minio.internal" }, "URL_HOST_BLOCKED"],
    ["a bucket name S3 does not allow", { bucket: "Bad_Bucket!" }, "VALIDATION_FAILED"],
    ["a prefix that climbs out", { prefix: "a/../b/" }, "VALIDATION_FAILED"],
    ["a name that looks like an id", { name: "dst_123" }, "VALIDATION_FAILED"],
    ["another type", { type: "ftp" }, "VALIDATION_FAILED"],
    ["plain http to a host outside the development allow-list", { endpoint: "http://s3.amazonaws.com" }, "URL_NOT_ALLOWED"],
    ["a field destinations do not have", { acl: "public-read" }, "VALIDATION_FAILED"],
  ])("refuses %s and saves nothing", async (_case, overrides, code) => {
    const { key } = await createUser();
    await expectProblem(await postJson("/v1/destinations", key, destinationBody(overrides)), 400, code);
    expect(await (await api("/v1/destinations", key)).json()).toEqual({ total: 0, destinations: [] });
  });

  it("needs an API key", async () => {
    await expectProblem(await postJson("/v1/destinations", undefined, destinationBody()), 401, "UNAUTHORIZED");
  });
});

describe("GET, PATCH and DELETE /v1/destinations/{id}", () => {
  it("lists, reads by id or name, changes and deletes a destination", async () => {
    const { key } = await createUser();
    const first = await created(key, { name: "b-second" });
    await created(key, { name: "a-first" });
    const list = await (await api("/v1/destinations", key)).json<{ total: number; destinations: Destination[] }>();
    expect(list.total).toBe(2);
    expect(list.destinations.map((destination) => destination.name)).toEqual(["a-first", "b-second"]);
    expect(await (await api(`/v1/destinations/${first.id}`, key)).json()).toEqual(first);
    expect(await (await api("/v1/destinations/b-second", key)).json()).toEqual(first);

    const renamed = await patchJson(`/v1/destinations/${first.id}`, key, { name: "renamed", prefix: "other/", secret_access_key: "new-secret" });
    expect(renamed.status).toBe(200);
    const body = await renamed.json<Destination>();
    expect(body).toMatchObject({ id: first.id, name: "renamed", prefix: "other/" });
    expect(body.credentials_fingerprint).not.toBe(first.credentials_fingerprint);
    await expectProblem(await patchJson(`/v1/destinations/${first.id}`, key, { name: "a-first" }), 409, "DESTINATION_NAME_TAKEN");
    await expectProblem(await patchJson(`/v1/destinations/${first.id}`, key, { endpoint: "http://10.1.2.3" }), 400, "URL_HOST_BLOCKED");

    expect((await api(`/v1/destinations/${first.id}`, key, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api(`/v1/destinations/${first.id}`, key), 404, "NOT_FOUND");
  });

  it("pages the list with limit and offset, by name, with the total", async () => {
    const { key } = await createUser();
    for (const name of ["c", "a", "b"]) await created(key, { name });
    const page = await (await api("/v1/destinations?limit=2&offset=1", key)).json<{ total: number; destinations: Destination[] }>();
    expect(page.total).toBe(3);
    expect(page.destinations.map((destination) => destination.name)).toEqual(["b", "c"]);
    await expectProblem(await api("/v1/destinations?limit=0", key), 400, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/destinations?limit=101", key), 400, "VALIDATION_FAILED");
  });

  it.each([
    ["type", { type: "s3" }],
    ["a field destinations do not have", { descr: "x" }],
  ])("refuses a change naming %s with VALIDATION_FAILED naming it, and changes nothing", async (_case, change) => {
    const { key } = await createUser();
    const destination = await created(key);
    const problem = await expectProblem(await patchJson(`/v1/destinations/${destination.id}`, key, { ...change, prefix: "changed/" }), 400, "VALIDATION_FAILED");
    expect(problem.detail).toContain(Object.keys(change)[0]);
    expect(await (await api(`/v1/destinations/${destination.id}`, key)).json()).toEqual(destination);
  });

  it("answers 404 for another user's destination, whatever the method", async () => {
    const owner = await createUser();
    const other = await createUser();
    const destination = await created(owner.key);
    await expectProblem(await api(`/v1/destinations/${destination.id}`, other.key), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/destinations/${destination.name}`, other.key), 404, "NOT_FOUND");
    await expectProblem(await patchJson(`/v1/destinations/${destination.id}`, other.key, { name: "mine" }), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/destinations/${destination.id}`, other.key, { method: "DELETE" }), 404, "NOT_FOUND");
    await expectProblem(await postJson(`/v1/destinations/${destination.id}/test`, other.key, {}), 404, "NOT_FOUND");
    expect((await api(`/v1/destinations/${destination.id}`, owner.key)).status).toBe(200);
  });
});

describe("POST /v1/destinations/{id}/test", () => {
  it("answers ok once the probe was written and deleted", async () => {
    const { key } = await createUser();
    const destination = await created(key);
    const response = await postJson(`/v1/destinations/${destination.id}/test`, key, {});
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, key: expect.stringMatching(new RegExp(`^${destination.prefix}\\.ffedge-probe-`)) });
  });

  it("answers DESTINATION_CREDENTIALS for a wrong secret, DESTINATION_REFUSED for a missing bucket, DESTINATION_UNREACHABLE for a dead server", async () => {
    const { key } = await createUser();
    const wrongSecret = await created(key, { secret_access_key: "not-the-secret" });
    const noBucket = await created(key, { bucket: "missing-bucket" });
    const dead = await created(key, { endpoint: "http://127.0.0.1:9" });
    expect(await expectProblem(await postJson(`/v1/destinations/${wrongSecret.id}/test`, key, {}), 422, "DESTINATION_CREDENTIALS")).toMatchObject({ destination: wrongSecret.id });
    expect(await expectProblem(await postJson(`/v1/destinations/${noBucket.id}/test`, key, {}), 422, "DESTINATION_REFUSED")).toMatchObject({ s3_code: "NoSuchBucket", destination: noBucket.id });
    const unreachable = await expectProblem(await postJson(`/v1/destinations/${dead.id}/test`, key, {}), 502, "DESTINATION_UNREACHABLE");
    expect(unreachable).toMatchObject({ destination: dead.id });
    expect(unreachable.detail).toContain(dead.name);
  });
});

describe("POST /v1/tasks with a destination", () => {
  it("refuses a destination that is not the caller's with DESTINATION_NOT_FOUND, and creates no task", async () => {
    const owner = await createUser();
    const other = await createUser();
    const destination = await created(owner.key);
    const command = "ffmpeg -i https://example.com/in.mp4 out.mp4";
    await expectProblem(await postJson("/v1/tasks", other.key, { command, destination: { id: destination.id } }), 400, "DESTINATION_NOT_FOUND");
    await expectProblem(await postJson("/v1/tasks", other.key, { command, destination: { id: "nothing-here" } }), 400, "DESTINATION_NOT_FOUND");
    expect(await (await api("/v1/tasks", other.key)).json()).toMatchObject({ total: 0 });
  });

  it("accepts the caller's destination by name", async () => {
    const { key } = await createUser();
    await created(key, { name: "by-name" });
    const response = await postJson("/v1/tasks", key, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", destination: { id: "by-name", mode: "only" } });
    expect(response.status, await response.clone().text()).toBe(201);
  });
});
