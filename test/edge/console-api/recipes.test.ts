import { describe, expect, it } from "vitest";
import { fillRecipe, RECIPES, type RecipeInputKind } from "../../../edge/console/recipes";
import { fakeMp4, multipart } from "../helpers";
import { expectProblem } from "../../helpers/problems";
import { type ConsoleClient, signedInUser } from "./client";

/** A 1×1 PNG, so the upload sniffs as the image it claims to be. */
const PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));
const SRT = "1\n00:00:00,000 --> 00:00:02,000\nHello\n";

async function upload(client: ConsoleClient, filename: string, type: string, data: Uint8Array | string): Promise<string> {
  const form = multipart([{ name: "file", filename, type, data }]);
  const response = await client.fetch("/console/api/upload/file", { method: "POST", headers: { "content-type": form.contentType }, body: form.body });
  expect(response.status, await response.clone().text()).toBe(201);
  // The CDN's second host, 127.0.0.1, is the one on the test's development allow-list (DEV_FETCH_ALLOW_HOSTS).
  return (await response.json<{ cn_url: string }>()).cn_url;
}

describe("the composer's recipes", () => {
  it("each pass POST /v1/tasks/validate once filled with the user's uploads, naming the outputs they make", async () => {
    const { client } = await signedInUser();
    const urls: Record<RecipeInputKind, string> = {
      video: await upload(client, "clip.mp4", "video/mp4", fakeMp4()),
      image: await upload(client, "logo.png", "image/png", PNG),
      subtitles: await upload(client, "subs.srt", "application/x-subrip", SRT),
    };
    expect(RECIPES.map((recipe) => recipe.id)).toEqual(["thumbnail", "gif", "hls", "audio", "trim", "watermark", "subtitles"]);
    for (const recipe of RECIPES) {
      const command = fillRecipe(recipe, urls);
      expect(command).not.toMatch(/\{(video|image|subtitles)\}/);
      const response = await client.fetch("/console/api/v1/tasks/validate", { json: { command } });
      expect(response.status, `${recipe.id}: ${await response.clone().text()}`).toBe(200);
      const verdict = await response.json<{ inputs: string[]; outputs: string[] }>();
      expect(verdict.inputs, recipe.id).toEqual(recipe.inputs.map((kind) => urls[kind]));
      expect(verdict.outputs.length, recipe.id).toBeGreaterThan(0);
    }
  });

  it("left without an input, is refused with the placeholder as the token at fault", async () => {
    const { client } = await signedInUser();
    const video = await upload(client, "clip.mp4", "video/mp4", fakeMp4());
    const watermark = RECIPES.find((recipe) => recipe.id === "watermark")!;
    const problem = await expectProblem(await client.fetch("/console/api/v1/tasks/validate", { json: { command: fillRecipe(watermark, { video }) } }), 400, "INPUT_NOT_ALLOWED");
    expect(problem.token).toBe("{image}");
  });
});
