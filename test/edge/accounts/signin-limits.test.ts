import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAIL_CLIENT_LIMIT, MAIL_PAIR_LIMIT, MAIL_RECIPIENT_LIMIT, takeMailAllowance } from "../../../edge/accounts/signin-limits";
import { AppError } from "../../../shared/errors";
import { ConsoleClient, newEmail, signedInUser } from "../console-api/client";
import { expectProblem } from "../../helpers/problems";

const forgot = (client: ConsoleClient, email: string) => client.fetch("/console/api/auth/forgot", { json: { email } });

async function expectMailRefused(response: Response): Promise<void> {
  const retryAfter = Number(response.headers.get("retry-after"));
  const problem = await expectProblem(response, 429, "TOO_MANY_ATTEMPTS");
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  expect(problem.retry_after).toBe(retryAfter);
}

describe("mail requests without a sign-in (sign-up, forgotten password)", () => {
  it("are refused for one address past its allowance with 429 TOO_MANY_ATTEMPTS and Retry-After, whatever client asks", async () => {
    const email = newEmail();
    for (let i = 0; i < MAIL_RECIPIENT_LIMIT; i++) expect((await forgot(new ConsoleClient(), email)).status).toBe(202);
    await expectMailRefused(await forgot(new ConsoleClient(), email));
  });

  it("answer the same for an address with an account as for one without, refusal included", async () => {
    const { email: registered } = await signedInUser();
    const unknown = newEmail();
    // signedInUser's sign-up already took one mail of the registered address: even them out.
    await forgot(new ConsoleClient(), unknown);
    const answers = async (email: string) => {
      const seen: string[] = [];
      for (let i = 1; i < MAIL_RECIPIENT_LIMIT + 2; i++) {
        const response = await forgot(new ConsoleClient(), email);
        const body = (await response.json()) as { code?: string; message?: string };
        seen.push(`${response.status} ${body.code ?? body.message}`);
      }
      return seen;
    };
    const forRegistered = await answers(registered);
    expect(forRegistered).toEqual(await answers(unknown));
    expect(forRegistered.slice(-2)).toEqual(["429 TOO_MANY_ATTEMPTS", "429 TOO_MANY_ATTEMPTS"]);
  });

  it("share one allowance between sign-up and reset", async () => {
    const email = newEmail();
    for (let i = 0; i < MAIL_RECIPIENT_LIMIT - 1; i++) expect((await new ConsoleClient().signUp(email)).status).toBe(202);
    expect((await forgot(new ConsoleClient(), email)).status).toBe(202);
    await expectMailRefused(await new ConsoleClient().signUp(email));
    await expectMailRefused(await forgot(new ConsoleClient(), email));
  });

  it("are refused for one client address past its allowance, to any recipient, while other clients go on", async () => {
    const client = new ConsoleClient();
    for (let i = 0; i < MAIL_CLIENT_LIMIT; i++) expect((await forgot(client, newEmail())).status).toBe(202);
    await expectMailRefused(await forgot(client, newEmail()));
    await expectMailRefused(await client.signUp(newEmail()));
    expect((await forgot(new ConsoleClient(), newEmail())).status).toBe(202);
  });

  it("are allowed again once the window has ended", async () => {
    const email = newEmail();
    const now = Date.now();
    for (let i = 0; i < MAIL_PAIR_LIMIT; i++) await takeMailAllowance(env.DB, email, "192.0.2.1", now);
    const refused = await takeMailAllowance(env.DB, email, "192.0.2.1", now + 60_000).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).headers["Retry-After"]).toBe(String(15 * 60 - 60));
    await expect(takeMailAllowance(env.DB, email, "192.0.2.1", now + 15 * 60_000)).resolves.toBeUndefined();
  });
});
