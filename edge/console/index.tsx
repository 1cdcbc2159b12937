import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import type { Child } from "hono/jsx";
import { AppError } from "../../shared/errors";
import { sessionCookieName } from "../accounts/sessions";
import { config } from "../lib/config";
import { problemResponse } from "../lib/problem";
import { assetPaths, consoleAssets } from "./assets";
import { filesOfSession } from "./files";
import { Layout, type PageContext } from "./layout";
import { Account, Composer, Files, Keys, Task, Tasks, Usage, Webhooks } from "./pages/app";
import { Forgot, Reset, SignIn, SignUp, Verify } from "./pages/auth";
import { Destinations, Presets } from "./pages/workflows";

/**
 * Every console page: scripts and styles only from our origin (no inline code at all), data
 * only from our own API, never framed, never leaking its URL (reset and verify tokens) by Referer.
 * Images, audio and video may also come from the CDN's origin (PUBLIC_URL), for the task page's
 * previews of outputs: the CDN serves only passive types inline, each under `sandbox`.
 */
function pageHeaders(env: Env): Record<string, string> {
  const cdn = new URL(config(env).publicUrl).origin;
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' ${cdn}`,
    `media-src ${cdn}`,
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ];
  return { ...PAGE_HEADERS, "content-security-policy": policy.join("; ") };
}

const PAGE_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
  "cache-control": "no-store",
};

interface PageSpec {
  title: string;
  page: string;
  signedIn: boolean;
  body: (context: PageContext) => Child;
}

type ConsoleContext = Context<{ Bindings: Env }>;

/**
 * Sign-in for a browser without a live session. Only one that still sent a session cookie had a
 * session that ended; a browser that never signed in here is not told so.
 */
function signInRedirect(c: ConsoleContext): Response {
  const url = new URL(c.req.url);
  const query = new URLSearchParams({ next: url.pathname + url.search });
  if (getCookie(c, sessionCookieName(c.env))) query.set("reason", "expired");
  return c.redirect(`/console/signin?${query}`, 302);
}

async function render(c: ConsoleContext, spec: PageSpec, data?: Record<string, string>): Promise<Response> {
  // Without any cookie there is no session to check: straight to sign-in, before any script runs.
  if (spec.signedIn && !getCookie(c, sessionCookieName(c.env))) return signInRedirect(c);
  const apiUrl = config(c.env).edgeUrl;
  const node = (
    <Layout title={spec.title} page={spec.page} signedIn={spec.signedIn} assets={await assetPaths()} data={spec.signedIn ? { "api-url": apiUrl, ...data } : data}>
      {spec.body({ apiUrl })}
    </Layout>
  );
  return c.html(`<!doctype html>${String(node)}`, 200, pageHeaders(c.env));
}

const PAGES: Record<string, PageSpec> = {
  "/signin": { title: "Sign in", page: "signin", signedIn: false, body: SignIn },
  "/signup": { title: "Create an account", page: "signup", signedIn: false, body: SignUp },
  "/verify": { title: "Verify your address", page: "verify", signedIn: false, body: Verify },
  "/forgot": { title: "Forgot password", page: "forgot", signedIn: false, body: Forgot },
  "/reset": { title: "Choose a new password", page: "reset", signedIn: false, body: Reset },
  "/tasks": { title: "Tasks", page: "tasks", signedIn: true, body: Tasks },
  "/keys": { title: "API keys", page: "keys", signedIn: true, body: Keys },
  "/usage": { title: "Usage", page: "usage", signedIn: true, body: Usage },
  "/webhooks": { title: "Webhooks", page: "webhooks", signedIn: true, body: Webhooks },
  "/destinations": { title: "Destinations", page: "destinations", signedIn: true, body: Destinations },
  "/account": { title: "Account", page: "account", signedIn: true, body: Account },
};

/** The web console's pages and assets, mounted at /console (its JSON API is /console/api). */
export const consolePages = new Hono<{ Bindings: Env }>();

consolePages.get("/", (c) => c.redirect("/console/tasks", 302));

for (const [path, spec] of Object.entries(PAGES)) consolePages.get(path, (c) => render(c, spec));

/** Files, the composer and the presets' run forms list the user's files in the page itself (`data-files`). */
for (const spec of [
  { path: "/files", title: "Files", page: "files", signedIn: true, body: Files },
  { path: "/new", title: "New task", page: "composer", signedIn: true, body: Composer },
  { path: "/presets", title: "Presets", page: "presets", signedIn: true, body: Presets },
]) {
  consolePages.get(spec.path, async (c) => {
    const files = await filesOfSession(c);
    if (!files) return signInRedirect(c);
    return render(c, spec, { files: JSON.stringify(files) });
  });
}

consolePages.get("/tasks/:task_id{[A-Za-z0-9_-]{1,64}}", (c) =>
  render(c, { title: `Task ${c.req.param("task_id")}`, page: "task", signedIn: true, body: Task }, { "task-id": c.req.param("task_id") }),
);

consolePages.get("/assets/:file", async (c) => {
  const asset = (await consoleAssets()).find((candidate) => candidate.path === c.req.path);
  // An old hash after a deploy, or a made-up name: the page that asked for it is stale.
  if (!asset) return problemResponse(new AppError("NOT_FOUND", `There is no console asset ${c.req.path}.`));
  return c.body(asset.body, 200, {
    "content-type": asset.contentType,
    "cache-control": "public, max-age=31536000, immutable",
    "x-content-type-options": "nosniff",
  });
});
