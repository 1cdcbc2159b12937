import type { Child } from "hono/jsx";

const NAV = [
  { href: "/console/tasks", label: "Tasks", page: "tasks" },
  { href: "/console/new", label: "New task", page: "composer" },
  { href: "/console/presets", label: "Presets", page: "presets" },
  { href: "/console/files", label: "Files", page: "files" },
  { href: "/console/keys", label: "API keys", page: "keys" },
  { href: "/console/usage", label: "Usage", page: "usage" },
  { href: "/console/webhooks", label: "Webhooks", page: "webhooks" },
  { href: "/console/destinations", label: "Destinations", page: "destinations" },
  { href: "/console/account", label: "Account", page: "account" },
];

/** What a page body may show of the deployment: its API's base URL (`EDGE_URL`), for snippets. */
export interface PageContext {
  apiUrl: string;
}

interface LayoutProps {
  title: string;
  /** Which page module the browser script runs (`data-page`). */
  page: string;
  /** Pages behind sign-in show the navigation; the sign-in pages do not. */
  signedIn: boolean;
  assets: { script: string; stylesheet: string; icon: string };
  data?: Record<string, string>;
  children: Child;
}

export function Layout(props: LayoutProps) {
  const data = Object.fromEntries(Object.entries(props.data ?? {}).map(([name, value]) => [`data-${name}`, value]));
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · ffedge console`}</title>
        <link rel="icon" type="image/svg+xml" href={props.assets.icon} />
        <link rel="stylesheet" href={props.assets.stylesheet} />
        <script type="module" src={props.assets.script}></script>
      </head>
      <body data-page={props.page} {...data}>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href={props.signedIn ? "/console/tasks" : "/console/signin"}>ffedge</a>
          {props.signedIn && (
            <nav aria-label="Console">
              <ul>
                {NAV.map((item) => (
                  <li>
                    <a href={item.href} aria-current={item.page === props.page ? "page" : undefined}>{item.label}</a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {props.signedIn && (
            <p class="who">
              <span id="who"></span>
              <button type="button" id="sign-out" class="secondary">Sign out</button>
            </p>
          )}
        </header>
        <main id="main" tabindex={-1}>
          <h1>{props.title}</h1>
          <div id="flash" role="alert" class="flash" hidden></div>
          {props.children}
        </main>
        <div id="announcer" class="sr-only" role="status" aria-live="polite"></div>
      </body>
    </html>
  );
}
