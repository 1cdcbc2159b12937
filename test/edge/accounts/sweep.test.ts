import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueMailToken } from "../../../edge/accounts/mail-tokens";
import { sweepAccountRecords } from "../../../edge/accounts/sweep";
import { createUser } from "../../../edge/accounts/users";
import { USER_HAS_TASKS, insertTask } from "../../../edge/tasks/repository";
import { seedFile } from "../files/fixtures";
import { createUser as createKeyUser } from "../helpers";
import { newEmail, signedInUser } from "../console-api/client";

const DAY = 24 * 60 * 60 * 1000;
const tasks = { userHasTasks: USER_HAS_TASKS };
const count = (sql: string, ...params: unknown[]) => env.DB.prepare(sql).bind(...params).first<number>("n");

describe("sweepAccountRecords", () => {
  it("drops expired sessions and tokens, ended sign-in windows and old outbox mail, keeping live ones", async () => {
    const { userId } = await signedInUser();
    const later = new Date(Date.now() + 15 * DAY);
    await env.DB.prepare("INSERT INTO signin_failures (subject, failures, window_ends_at) VALUES (?, 3, ?)").bind(`account:${newEmail()}`, Math.floor(Date.now() / 1000) + 60).run();
    const token = await issueMailToken(env.DB, userId, "reset");
    expect(token).toBeTruthy();
    await sweepAccountRecords(env, tasks, new Date());
    expect(await count("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?", userId)).toBe(1);
    // The sign-up's used verification token stays, without its password, until its link expires.
    expect(await count("SELECT COUNT(*) AS n FROM mail_tokens WHERE user_id = ?", userId)).toBe(2);

    const swept = await sweepAccountRecords(env, tasks, later);
    expect(swept.sessions).toBeGreaterThanOrEqual(1);
    expect(await count("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?", userId)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM mail_tokens WHERE user_id = ?", userId)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM signin_failures WHERE window_ends_at <= ?", Math.floor(later.getTime() / 1000))).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM dev_outbox WHERE created_at <= ?", new Date(later.getTime() - 7 * DAY).toISOString())).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id = ?", userId)).toBe(1);
  });

  it("forgets a sign-up never confirmed after a week, but never a verified user or one with keys", async () => {
    const { user: unconfirmed } = await createUser(env.DB, newEmail(), new Date(Date.now() - 8 * DAY));
    const { user: fresh } = await createUser(env.DB, newEmail());
    const withKey = await createKeyUser();
    await env.DB.prepare("UPDATE users SET email = ?, created_at = ? WHERE id = ?").bind(newEmail(), new Date(Date.now() - 30 * DAY).toISOString(), withKey.userId).run();
    await sweepAccountRecords(env, tasks);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id = ?", unconfirmed.id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id = ?", fresh.id)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id = ?", withKey.userId)).toBe(1);
  });

  it("keeps an unconfirmed sign-up that holds a task or a file (the tasks' condition comes from their owner)", async () => {
    const old = new Date(Date.now() - 8 * DAY);
    const { user: withTask } = await createUser(env.DB, newEmail(), old);
    const { user: withFile } = await createUser(env.DB, newEmail(), old);
    await insertTask(env.DB, { id: `tsk_${crypto.randomUUID().slice(0, 12)}`, user_id: withTask.id, command: "ffmpeg -i in.mp4 out.mp4", with_metadata: 0, webhook_url: null, created_at: old.toISOString() });
    await seedFile(withFile.id, { expiresAt: new Date(Date.now() + DAY) });
    await sweepAccountRecords(env, tasks);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id IN (?, ?)", withTask.id, withFile.id)).toBe(2);
  });
});
