/**
 * The console's browser code, bundled by esbuild into one module (scripts/build-console.ts) that
 * the Worker serves under a content-hashed URL. The layout names the page in `data-page`; this
 * runs that page's module, after the session check on pages behind sign-in.
 */
import { api, isStatus, setCsrf } from "./api";
import { messageOf } from "./actions";
import { signedInChrome } from "./chrome";
import { $, flash } from "./dom";
import { accountPage } from "./pages/account";
import { forgotPage, resetPage, signinPage, signupPage, verifyPage } from "./pages/auth";
import { composerPage } from "./pages/composer";
import { destinationsPage } from "./pages/destinations";
import { filesPage } from "./pages/files";
import { keysPage } from "./pages/keys";
import { presetsPage } from "./pages/presets";
import { taskPage } from "./pages/task";
import { tasksPage } from "./pages/tasks";
import { usagePage } from "./pages/usage";
import { webhooksPage } from "./pages/webhooks";
import type { Session } from "./types";

type Page = () => void | Promise<void>;

const SIGNED_OUT: Record<string, Page> = { signin: signinPage, signup: signupPage, verify: verifyPage, forgot: forgotPage, reset: resetPage };
const SIGNED_IN: Record<string, Page> = { tasks: tasksPage, task: taskPage, composer: composerPage, files: filesPage, keys: keysPage, usage: usagePage, webhooks: webhooksPage, account: accountPage, presets: presetsPage, destinations: destinationsPage };

async function start(): Promise<void> {
  const page = document.body.dataset.page ?? "";
  try {
    const signedOut = SIGNED_OUT[page];
    if (signedOut) await signedOut();
    else {
      const session = await api<Session>("/session");
      setCsrf(session.csrf_token);
      $("#who").textContent = session.email;
      signedInChrome();
      await SIGNED_IN[page]!();
    }
    document.body.dataset.ready = "true";
  } catch (error) {
    if (!isStatus(error, 401)) flash(messageOf(error));
  }
}

void start();
