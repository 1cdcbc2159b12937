import { AuthorizationError, CimdFetchError, type ConsentDescription } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { AppError } from "../../shared/errors";
import { readSession } from "../accounts/sessions";
import { assetPaths } from "../console/assets";
import { requireSameOrigin } from "../console/api/guards";
import { constantTimeEqual } from "../lib/auth";
import { createApp, type AppEnv } from "../lib/openapi";
import { AUTHORIZE_PATH, type GrantProps, requireAuthorizationServer } from "./oauth";

type AuthorizeContext = Context<AppEnv>;

/**
 * The console's page policy without any script (the page is one plain form). Chrome applies
 * form-action to the redirect that follows the POST, so the client's redirect URI is allowed too.
 * https://www.w3.org/TR/CSP3/#directive-form-action
 */
function consentHeaders(redirectUri: string): Record<string, string> {
  const target = new URL(redirectUri);
  const destination = target.protocol === "http:" || target.protocol === "https:" ? target.origin : target.protocol;
  return {
    "content-security-policy": `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' ${destination}; frame-ancestors 'none'; base-uri 'none'`,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    // Not no-referrer, the console's usual: with it a browser posts the form with `Origin: null`,
    // and requireSameOrigin could not tell our own page from any other.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
  };
}

function ConsentPage(props: { details: ConsentDescription; email: string; handle: string; csrfToken: string; assets: { stylesheet: string; icon: string } }) {
  const { details } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Allow access · ffedge console</title>
        <link rel="icon" type="image/svg+xml" href={props.assets.icon} />
        <link rel="stylesheet" href={props.assets.stylesheet} />
      </head>
      <body data-page="oauth-consent">
        <header class="top">
          <a class="brand" href="/console/tasks">ffedge</a>
        </header>
        <main id="main">
          <h1>Allow access</h1>
          <section class="card narrow">
            <p>
              <strong>{details.clientName}</strong> wants to run ffmpeg tasks and read your files as <strong>{props.email}</strong>.
            </p>
            <p>
              {details.clientDomain ? <>Published by <strong>{details.clientDomain}</strong>. </> : <>This app registered itself; its name is not verified. </>}
              Access will be sent to <strong>{details.redirectHost}</strong>.
            </p>
            {details.redirectIsLoopback && <p><strong>This sends access to an app on your computer.</strong> Continue only if you just started connecting it.</p>}
            <form method="post" action={AUTHORIZE_PATH}>
              <input type="hidden" name="handle" value={props.handle} />
              <input type="hidden" name="csrf_token" value={props.csrfToken} />
              <p class="actions">
                <button type="submit" name="decision" value="allow">Allow</button>
                <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
              </p>
            </form>
          </section>
        </main>
      </body>
    </html>
  );
}

/**
 * A request the library refuses: sent back to the client when its redirect URI is known good,
 * otherwise answered here, since an unverified redirect URI must never receive anything.
 */
function refused(error: unknown): Response {
  if (error instanceof AuthorizationError && error.redirectTo) return Response.redirect(error.redirectTo, 302);
  if (error instanceof AuthorizationError) throw new AppError("VALIDATION_FAILED", `This authorization request cannot be used: ${error.description}`);
  if (error instanceof CimdFetchError) throw new AppError("VALIDATION_FAILED", "The app's client metadata document could not be fetched.");
  if (error instanceof Error && !(error instanceof TypeError)) throw new AppError("VALIDATION_FAILED", `This authorization request is malformed: ${error.message}`);
  throw error;
}

async function showConsent(c: AuthorizeContext): Promise<Response> {
  const url = new URL(c.req.url);
  const oauth = requireAuthorizationServer(url.origin).getOAuthApi(c.env);
  const authRequest = await oauth.parseAuthRequest(c.req.raw).catch(refused);
  if (authRequest instanceof Response) return authRequest;
  const session = await readSession(c);
  if (!session) return c.redirect(`/console/signin?${new URLSearchParams({ next: url.pathname + url.search })}`, 302);
  const details = await oauth.describeConsent(authRequest).catch(refused);
  if (details instanceof Response) return details;
  const consent = await oauth.beginConsent(authRequest);
  const { stylesheet, icon } = await assetPaths();
  const page = <ConsentPage details={details} email={session.email ?? session.userId} handle={consent.handle} csrfToken={session.csrfToken} assets={{ stylesheet, icon }} />;
  const headers = new Headers(consent.headers);
  for (const [name, value] of Object.entries(consentHeaders(authRequest.redirectUri))) headers.set(name, value);
  headers.set("content-type", "text/html; charset=utf-8");
  return new Response(`<!doctype html>${String(page)}`, { status: 200, headers });
}

async function decide(c: AuthorizeContext): Promise<Response> {
  const oauth = requireAuthorizationServer(new URL(c.req.url).origin).getOAuthApi(c.env);
  const session = await readSession(c);
  if (!session) throw new AppError("UNAUTHORIZED", "Your console session ended: start connecting from your app again.");
  // A body that is not a form has no csrf_token, so it fails the check below.
  const form = await c.req.formData().catch(() => new FormData());
  const csrfToken = String(form.get("csrf_token") ?? "");
  if (!constantTimeEqual(csrfToken, session.csrfToken)) throw new AppError("CSRF_FAILED", "The form's csrf_token is missing or does not match the session.");
  const handle = String(form.get("handle") ?? "");
  try {
    if (form.get("decision") !== "allow") {
      const denied = await oauth.denyConsent(c.req.raw, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const approved = await oauth.approveConsent(c.req.raw, handle);
    const props: GrantProps = { userId: session.userId };
    const { redirectTo } = await oauth.completeAuthorization({ request: approved.request, userId: session.userId, metadata: {}, scope: approved.request.scope, props });
    approved.headers.set("location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (error) {
    if (error instanceof AuthorizationError) throw new AppError("INVALID_TOKEN", `This consent page expired, was already used, or was opened in another browser (${error.description}); start connecting from your app again.`);
    throw error;
  }
}

/**
 * The authorize step of OAuth for remote MCP connectors: the console's session signs the user in,
 * this page asks whether the app may act for them, and the grant carries `{ userId }`.
 */
export function oauthConsent() {
  const app = createApp();
  app.get(AUTHORIZE_PATH, showConsent);
  app.post(AUTHORIZE_PATH, requireSameOrigin, decide);
  return app;
}
