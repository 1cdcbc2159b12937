/** The signed-in pages: server-rendered structure that the browser script fills from /console/api. */
import { TASK_STATUSES } from "../../../shared/schemas/tasks";
import { RECIPES } from "../recipes";
import type { PageContext } from "../layout";
import { GettingStarted } from "./getting-started";
import { ScrollTable } from "./table";
import { DeliverTo, Endpoints } from "./workflows";

const ACTIONS = <span class="sr-only">Actions</span>;

export function Tasks(context: PageContext) {
  return (
    <>
      <form id="task-filter" class="toolbar">
        <label for="status">Status</label>
        <select id="status" name="status">
          <option value="">All</option>
          {[...TASK_STATUSES, "canceled"].map((status) => <option value={status}>{status}</option>)}
        </select>
        <a class="button" href="/console/new">New task</a>
      </form>
      <ScrollTable id="task-table" caption={{ id: "task-count", text: "Your tasks" }} columns={["Task", "Command", "Status", "Duration", "Outputs", "Error", "Created"]} />
      <p id="task-empty" hidden>No tasks yet. <a href="/console/new">Run your first one.</a></p>
      <GettingStarted apiUrl={context.apiUrl} />
      <nav class="pager" aria-label="Pages">
        <button type="button" id="prev-page">Previous</button>
        <span id="page-info"></span>
        <button type="button" id="next-page">Next</button>
      </nav>
    </>
  );
}

export function Task() {
  return (
    <>
      <p id="task-missing" hidden>There is no such task in your account. <a href="/console/tasks">All tasks</a></p>
      <div id="task-body" hidden>
        <section aria-labelledby="status-heading" class="card">
          <h2 id="status-heading">Status: <span id="task-status"></span></h2>
          <progress id="task-progress" max={100} value={0} aria-label="Progress"></progress>
          <p><span id="task-percent"></span> <span id="task-eta"></span></p>
          <p id="task-error" class="error" hidden></p>
          <dl id="task-times" class="facts"></dl>
          <p class="actions">
            <button type="button" id="cancel-task" hidden>Cancel</button>
            <button type="button" id="rerun-task" hidden>Run again</button>
            <a class="button secondary" id="edit-task" href="/console/new">Edit as new task</a>
            <button type="button" id="delete-task" class="danger" hidden>Delete</button>
          </p>
        </section>
        <section id="steps-section" aria-labelledby="steps-heading" hidden>
          <h2 id="steps-heading">Steps</h2>
          <ol id="task-steps" class="steps-list"></ol>
        </section>
        <section aria-labelledby="command-heading">
          <h2 id="command-heading">Command</h2>
          <pre id="task-command" class="code"></pre>
          <details id="copy-as">
            <summary>Copy as curl, CLI or SDK</summary>
            <div id="copy-snippets"></div>
          </details>
        </section>
        <section aria-labelledby="outputs-heading">
          <h2 id="outputs-heading">Outputs</h2>
          <p id="task-destination" hidden></p>
          <ul id="task-outputs" class="outputs"></ul>
          <p><button type="button" id="retry-deliveries" class="secondary" hidden>Retry failed deliveries</button></p>
          <div id="task-previews" class="previews"></div>
          <p id="no-outputs">Outputs appear here when the task completes.</p>
        </section>
        <section aria-labelledby="log-heading">
          <h2 id="log-heading">ffmpeg log</h2>
          <pre id="task-log" class="code log" tabindex={0} aria-label="ffmpeg log"></pre>
        </section>
        <section aria-labelledby="webhook-heading">
          <h2 id="webhook-heading">Webhook deliveries</h2>
          <p id="webhook-url"></p>
          <ScrollTable id="delivery-table" columns={["Attempt", "When", "Answer", "Latency", "Error"]} />
          <p><button type="button" id="redeliver" hidden>Redeliver</button></p>
        </section>
      </div>
    </>
  );
}

export function Composer() {
  return (
    <form id="composer" class="card" novalidate>
      <p class="field">
        <label for="command">ffmpeg command</label>
        <textarea id="command" name="command" rows={5} spellcheck={false} autocapitalize="off" required aria-describedby="verdict" placeholder="ffmpeg -i https://… -vf scale=640:-2 small.mp4"></textarea>
      </p>
      <div id="verdict" class="verdict" aria-live="polite"></div>
      <pre id="command-marked" class="code" hidden aria-hidden="true"></pre>
      <fieldset>
        <legend>Inputs from your files</legend>
        <label for="file-pick">File</label>
        <select id="file-pick"><option value="">Loading…</option></select>
        <button type="button" id="insert-input">Add as input</button>
      </fieldset>
      <fieldset id="recipes">
        <legend>Start from a recipe</legend>
        <p class="hint">Fills the command with the file chosen above, or your newest file of the kind a recipe needs.</p>
        <ul class="recipes">
          {RECIPES.map((recipe) => (
            <li>
              <button type="button" class="secondary" data-recipe={recipe.id} data-command={recipe.command} data-inputs={recipe.inputs.join(",")} aria-describedby={`recipe-${recipe.id}`}>{recipe.title}</button>
              <span id={`recipe-${recipe.id}`} class="hint">{recipe.description}</span>
            </li>
          ))}
        </ul>
        <p id="recipe-note" class="hint" aria-live="polite"></p>
      </fieldset>
      <fieldset id="composer-presets">
        <legend>From a preset</legend>
        <p class="hint">A saved command with a form for its parameters. <a href="/console/presets">All presets</a></p>
        <ul id="preset-links" class="recipes"></ul>
      </fieldset>
      <DeliverTo id="composer-destination" />
      <p class="field">
        <input id="with-metadata" name="with_metadata" type="checkbox" />
        <label for="with-metadata">Probe outputs (size, duration, streams)</label>
      </p>
      <p class="field">
        <label for="webhook">Webhook URL (optional)</label>
        <input id="webhook" name="webhook" type="url" maxlength={2048} placeholder="https://example.com/hooks/ffedge" />
      </p>
      <p><button type="submit" id="run">Run</button></p>
    </form>
  );
}

export function Files() {
  return (
    <>
      <form id="upload-form" class="card" novalidate>
        <p class="field">
          <label for="upload-file">Upload a file (kept for a day)</label>
          <input id="upload-file" name="file" type="file" required />
        </p>
        <p><button type="submit">Upload</button></p>
        <progress id="upload-progress" max={100} value={0} aria-label="Upload progress" hidden></progress>
        <p id="upload-status" aria-live="polite"></p>
      </form>
      <ScrollTable id="file-table" columns={["File", "Size", "Type", "Expires in", ACTIONS]} />
      <p id="file-empty" hidden>No files stored.</p>
    </>
  );
}

export function Keys() {
  return (
    <>
      <form id="key-form" class="card toolbar" novalidate>
        <label for="key-name">Name</label>
        <input id="key-name" name="name" required maxlength={64} placeholder="laptop, CI, n8n…" />
        <button type="submit">Create key</button>
      </form>
      <section id="new-key" class="card notice" hidden aria-labelledby="new-key-heading">
        <h2 id="new-key-heading">Your new key</h2>
        <p>Copy it now: it is shown only once.</p>
        <p class="copyrow">
          <label for="new-key-value" class="sr-only">New API key</label>
          <input id="new-key-value" readonly class="mono" />
          <button type="button" id="copy-key">Copy</button>
        </p>
      </section>
      <ScrollTable id="key-table" columns={["Name", "Prefix", "Created", "Last used", ACTIONS]} />
    </>
  );
}

export function Usage() {
  return (
    <>
      <dl id="usage-facts" class="facts card"></dl>
      <section aria-labelledby="tasks-chart-heading">
        <h2 id="tasks-chart-heading">Tasks per day (last 30 days)</h2>
        <figure id="tasks-chart" class="chart"></figure>
      </section>
      <section aria-labelledby="seconds-chart-heading">
        <h2 id="seconds-chart-heading">Processing seconds per day (last 30 days)</h2>
        <figure id="seconds-chart" class="chart"></figure>
      </section>
    </>
  );
}

export function Webhooks() {
  return (
    <>
      <section class="card" aria-labelledby="secret-heading">
        <h2 id="secret-heading">Signing secret</h2>
        <p>Deliveries are signed with Standard Webhooks headers. The secret can be read only when it is made, so revealing one rotates it: a new secret replaces the current one, which keeps signing for a while so receivers can switch.</p>
        <p><button type="button" id="rotate-secret">Rotate and reveal a new secret</button></p>
        <div id="secret-box" hidden>
          <p class="copyrow">
            <label for="secret-value" class="sr-only">Signing secret</label>
            <input id="secret-value" readonly class="mono" />
            <button type="button" id="copy-secret">Copy</button>
          </p>
          <p id="secret-note"></p>
        </div>
      </section>
      <Endpoints />
      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Recent deliveries of task webhooks</h2>
        <ScrollTable id="recent-deliveries" columns={["Task", "Webhook URL", "Attempt", "When", "Answer"]} />
        <p id="deliveries-empty" hidden>None of your recent tasks has a webhook.</p>
      </section>
    </>
  );
}

export function Account() {
  return (
    <>
      <form id="password-form" class="card" novalidate aria-labelledby="password-heading">
        <h2 id="password-heading">Change password</h2>
        <p class="field"><label for="current-password">Current password</label><input id="current-password" type="password" required autocomplete="current-password" /></p>
        <p class="field"><label for="new-password">New password</label><input id="new-password" type="password" required minlength={10} maxlength={256} autocomplete="new-password" /></p>
        <p><button type="submit">Change password</button></p>
      </form>
      <form id="delete-form" class="card danger-zone" novalidate aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete account</h2>
        <p>Removes your keys, tasks, outputs and files at once. This cannot be undone.</p>
        <p class="field"><label for="delete-password">Password</label><input id="delete-password" type="password" required autocomplete="current-password" /></p>
        <p><button type="submit" class="danger">Delete my account</button></p>
      </form>
    </>
  );
}
