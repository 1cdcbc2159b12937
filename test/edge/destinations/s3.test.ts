import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { createDestination, testDestination } from "../../../edge/destinations/manage";
import { originUrl } from "../files/fixtures";
import { createUser } from "../helpers";
import { destinationBody } from "./fixtures";

describe("a bucket's refusal", () => {
  it("is read no further than its first 4 KiB, and reaches the user without control characters", async () => {
    const { userId } = await createUser();
    const hostile = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody({ endpoint: originUrl(""), bucket: "hostile-s3", path_style: true })));
    const refusal = await testDestination(env, userId, hostile.id).then(() => undefined, (error: unknown) => error as { code: string; detail: string; extra?: Record<string, unknown> });
    expect(refusal).toMatchObject({ code: "DESTINATION_REFUSED" });
    expect(refusal!.detail).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    // Its code is not S3's shape (it carries an escape sequence), so the status names the refusal.
    expect(refusal!.detail).toContain("HTTP500 (no [2J way)");
    // The server writes until the client goes away: it wrote a little past the 4 KiB read (socket buffers), never its 64 MiB.
    let sent: number[] = [];
    for (const deadline = Date.now() + 10_000; sent.length === 0 && Date.now() < deadline; ) {
      sent = await (await fetch(originUrl("/hostile-s3-log"))).json();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sent[0]).toBeLessThan(8 * 1024 * 1024);
  });
});
