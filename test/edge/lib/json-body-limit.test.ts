import { describe, expect, it } from "vitest";
import { api, createUser } from "../helpers";

const MiB = 1024 * 1024;

async function expectTooLarge(response: Response): Promise<void> {
  expect(response.status).toBe(413);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect((await response.json<{ code: string }>()).code).toBe("PAYLOAD_TOO_LARGE");
}

describe("the JSON body bound", () => {
  it("answers 413 from a declared Content-Length over 4 MiB without reading the body", async () => {
    const { key } = await createUser();
    // A body that declares 8 MiB and sends one chunk: it can only be answered from its header.
    const { readable, writable } = new FixedLengthStream(8 * MiB);
    const writer = writable.getWriter();
    writer.write(new TextEncoder().encode('{"command":"ffmpeg -i ')).catch(() => {});
    await expectTooLarge(await api("/v1/tasks", key, { method: "POST", headers: { "content-type": "application/json" }, body: readable }));
    await writer.abort().catch(() => {});
  });

  it("answers 413 once a JSON body without Content-Length passes 4 MiB", async () => {
    const { key } = await createUser();
    const chunk = new TextEncoder().encode("a".repeat(MiB));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"command":"'));
        sent += chunk.byteLength;
        if (sent > 16 * MiB) return controller.close();
        controller.enqueue(chunk);
      },
    });
    await expectTooLarge(await api("/v1/tasks", key, { method: "POST", headers: { "content-type": "application/json; charset=utf-8" }, body }));
    expect(sent).toBeLessThan(16 * MiB);
  });

  it("still takes an ordinary JSON body", async () => {
    const { key } = await createUser();
    const response = await api("/v1/tasks/validate", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: "ffmpeg -i https://example.com/a.mp4 out.mp4" }) });
    expect(response.status, await response.clone().text()).toBe(200);
  });
});
