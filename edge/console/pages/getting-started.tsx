/**
 * The empty task list's quick start: the deployment's API URL and a first run with each client,
 * ready to paste. Keys appear as `$FFEDGE_API_KEY`: a key is shown in full only once, when made.
 */
import type { PageContext } from "../layout";

function snippets(url: string) {
  return [
    {
      id: "curl",
      label: "curl",
      text: [
        `export FFEDGE_URL=${url}`,
        "export FFEDGE_API_KEY=ffe_...   # the key you made on the API keys page",
        `AUTH="Authorization: Bearer $FFEDGE_API_KEY"`,
        `json() { node -pe "JSON.parse(require('fs').readFileSync(0)).$1"; }`,
        "",
        "# 1. upload a local file",
        `URL=$(curl -s -H "$AUTH" -F file=@in.mp4 $FFEDGE_URL/api/upload/file | json url)`,
        "# 2. run ffmpeg on it",
        `TASK=$(curl -s -H "$AUTH" -H "content-type: application/json" $FFEDGE_URL/v1/tasks \\`,
        `  -d "{\\"command\\":\\"ffmpeg -i $URL -vf scale=640:-2 small.mp4\\"}" | json task_id)`,
        "# 3. poll until it ends; outputs[].url downloads the result",
        `until curl -s -H "$AUTH" $FFEDGE_URL/v1/tasks/$TASK | grep -qE '"status":"(completed|failed)"'; do sleep 2; done`,
        `curl -s -H "$AUTH" $FFEDGE_URL/v1/tasks/$TASK`,
      ].join("\n"),
    },
    {
      id: "cli",
      label: "CLI",
      text: [
        "npm run install:cli   # once, in a checkout of ffedge: installs the ffedge command",
        `FFEDGE_URL=${url} ffedge login   # paste your key: it is checked, then kept in ~/.config/ffedge`,
        `ffedge run "ffmpeg -i ./in.mp4 -vf scale=640:-2 small.mp4"`,
      ].join("\n"),
    },
    {
      id: "sdk",
      label: "SDK (TypeScript)",
      text: [
        `import { FFedge } from "@ffedge/sdk";`,
        "",
        `const ff = new FFedge({ apiKey: process.env.FFEDGE_API_KEY, baseUrl: "${url}" });`,
        `const task = await ff.run("ffmpeg -i ./in.mp4 -vf scale=640:-2 small.mp4", {`,
        "  onProgress: (event) => console.log(event),",
        "});",
        "console.log(task.outputs);",
      ].join("\n"),
    },
    {
      id: "mcp",
      label: "MCP (Claude Code)",
      text: `claude mcp add --transport http ffedge ${url}/mcp --header "Authorization: Bearer $FFEDGE_API_KEY"`,
    },
  ];
}

export function GettingStarted(props: PageContext) {
  return (
    <section id="getting-started" class="card" aria-labelledby="getting-started-heading" hidden>
      <h2 id="getting-started-heading">Getting started</h2>
      <ol class="steps">
        <li>
          Your API's base URL: <code id="api-url" class="mono">{props.apiUrl}</code>
        </li>
        <li>
          <a href="/console/keys">Make an API key</a>. It is shown once: keep it in <code class="mono">FFEDGE_API_KEY</code>, as the snippets below expect.
        </li>
        <li>
          Run a first task from your machine with one of these, or <a href="/console/new">write one here</a>.
        </li>
      </ol>
      {snippets(props.apiUrl).map((snippet) => (
        <div class="snippet">
          <h3 id={`snippet-${snippet.id}-heading`}>{snippet.label}</h3>
          <pre id={`snippet-${snippet.id}`} class="code" tabindex={0} aria-labelledby={`snippet-${snippet.id}-heading`}>{snippet.text}</pre>
          <button type="button" class="secondary copy-snippet" data-copy={`snippet-${snippet.id}`} aria-label={`Copy the ${snippet.label} snippet`}>Copy</button>
        </div>
      ))}
      <p class="hint">More in the README; every MCP client's set-up is in docs/mcp.md.</p>
    </section>
  );
}
