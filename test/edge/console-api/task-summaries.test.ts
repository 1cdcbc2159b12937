import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { summarizeCommand } from "../../../edge/console/summary";
import { expectProblem } from "../../helpers/problems";
import { ConsoleClient, signedInUser } from "./client";

type Summaries = { summaries: Record<string, { inputs: { url: string; name: string }[]; outputs: string[]; operations: string; text: string }> };

async function insertTask(id: string, userId: string, command: string): Promise<void> {
  await env.DB.prepare("INSERT INTO tasks (id, user_id, command, status, created_at) VALUES (?, ?, ?, 'completed', ?)").bind(id, userId, command, new Date().toISOString()).run();
}

async function insertUpload(key: string, userId: string, originalName: string | null): Promise<void> {
  const now = Date.now();
  await env.DB.prepare("INSERT INTO files (key, user_id, kind, size, content_type, original_name, created_at, expires_at) VALUES (?, ?, 'upload', 10, 'video/mp4', ?, ?, ?)")
    .bind(key, userId, originalName, new Date(now).toISOString(), new Date(now + 86_400_000).toISOString())
    .run();
}

describe("summarizeCommand", () => {
  it("names inputs by their last path segment, lists outputs, and puts filters before other options", () => {
    const summary = summarizeCommand("ffmpeg -y -i https://example.com/media/My%20Clip.mp4?sig=abc -c:v libx264 -vf scale=640:-2 small.mp4");
    expect(summary.text).toBe("My Clip.mp4 → small.mp4 · scale=640:-2 -c:v libx264");
    expect(summary.outputs).toEqual(["small.mp4"]);
  });

  it("quotes option values with spaces, and shows a command that no longer parses as written", () => {
    expect(summarizeCommand('-i https://example.com/a.mp4 -metadata "title=My film" b.mp4').operations).toBe('-metadata "title=My film"');
    expect(summarizeCommand("ffmpeg -i https://example.com/a.mp4 -no_such_option 1 out.mp4").text).toBe("ffmpeg -i https://example.com/a.mp4 -no_such_option 1 out.mp4");
  });
});

describe("GET /console/api/task-summaries", () => {
  it("names uploads by the name they were uploaded under, other URLs by their last segment, and leaves out other users' tasks", async () => {
    const { client, userId } = await signedInUser();
    const other = await signedInUser();
    const named = `uploads/${userId}/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    const unnamed = `uploads/${userId}/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    const theirs = `uploads/${other.userId}/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    await insertUpload(named, userId, "holiday.mp4");
    await insertUpload(unnamed, userId, null);
    await insertUpload(theirs, other.userId, "secret-name.mp4");
    const stamp = crypto.randomUUID().slice(0, 8);
    await insertTask(`tsk_sa${stamp}`, userId, `ffmpeg -i ${env.PUBLIC_URL}/${named} -i ${env.CN_PUBLIC_URL}/${unnamed} -filter_complex "[0:v][1:v]hstack" both.mp4`);
    await insertTask(`tsk_sb${stamp}`, userId, `-i https://example.com/in/source.mov -t 2 -an cut.mp4 -vn sound.mp3`);
    await insertTask(`tsk_sc${stamp}`, userId, `-i ${env.PUBLIC_URL}/${theirs} copy.mp4`);
    await insertTask(`tsk_sd${stamp}`, other.userId, `-i https://example.com/private.mp4 theirs.mp4`);

    const response = await client.fetch(`/console/api/task-summaries?ids=tsk_sa${stamp},tsk_sb${stamp},tsk_sc${stamp},tsk_sd${stamp},tsk_missing`);
    expect(response.status).toBe(200);
    const { summaries } = await response.json<Summaries>();
    expect(Object.keys(summaries).sort()).toEqual([`tsk_sa${stamp}`, `tsk_sb${stamp}`, `tsk_sc${stamp}`]);
    expect(summaries[`tsk_sa${stamp}`]!.text).toBe(`holiday.mp4, ${unnamed.split("/").pop()} → both.mp4 · [0:v][1:v]hstack`);
    expect(summaries[`tsk_sb${stamp}`]).toMatchObject({ text: "source.mov → cut.mp4, sound.mp3 · -t 2 -an -vn", outputs: ["cut.mp4", "sound.mp3"] });
    // Another user's upload URL in one's own command never reveals that user's file name.
    expect(summaries[`tsk_sc${stamp}`]!.inputs[0]!.name).toBe(theirs.split("/").pop());
  });

  it("refuses a malformed or too long list of ids, and answers 401 without a session", async () => {
    const { client } = await signedInUser();
    await expectProblem(await client.fetch("/console/api/task-summaries?ids=a;b"), 400, "VALIDATION_FAILED");
    await expectProblem(await client.fetch(`/console/api/task-summaries?ids=${Array.from({ length: 101 }, (_, i) => `t${i}`).join(",")}`), 400, "VALIDATION_FAILED");
    await expectProblem(await client.fetch("/console/api/task-summaries"), 400, "VALIDATION_FAILED");
    await expectProblem(await new ConsoleClient().fetch("/console/api/task-summaries?ids=tsk_x"), 401, "UNAUTHORIZED");
  });
});
