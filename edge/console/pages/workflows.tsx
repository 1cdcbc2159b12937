/** The workflow pages: presets (saved command templates) and destinations; the webhook endpoints section of the Webhooks page. */
import { ENDPOINT_EVENT_TYPES } from "../../../shared/schemas/webhooks";
import { ScrollTable } from "./table";

const ACTIONS = <span class="sr-only">Actions</span>;
/** Checked at first: a task's end. Progress (many events a task) and file expiry are opt-in. */
const DEFAULT_EVENTS = new Set<string>(["task.completed", "task.failed"]);
const PRESET_COLUMNS = ["Name", "Description", "Command", "Parameters", ACTIONS];
/** The user's own presets may name a destination; built-in ones never do. */
const OWN_PRESET_COLUMNS = ["Name", "Description", "Command", "Parameters", "Delivers to", ACTIONS];
const EXAMPLE_PARAMETERS = JSON.stringify({ type: "object", properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, width: { type: "integer", minimum: 16, maximum: 8192, default: 1280 } }, required: ["input"] }, null, 2);

/** A form field with the message the API gave about it (`<id>-error`), announced with the field. */
function Field(props: { id: string; label: string; hint?: string; children: unknown }) {
  return (
    <p class="field">
      <label for={props.id}>{props.label}</label>
      {props.hint && <span id={`${props.id}-hint`} class="hint">{props.hint}</span>}
      {props.children}
      <span id={`${props.id}-error`} class="field-error" hidden></span>
    </p>
  );
}

/** Where a new task's outputs also go: one of the user's destinations (the script fills and shows it when there are any). */
export function DeliverTo(props: { id: string }) {
  return (
    <fieldset id={`${props.id}-fieldset`} hidden>
      <legend>Deliver outputs to your storage</legend>
      <p class="field">
        <label for={props.id}>Destination</label>
        <select id={props.id}></select>
      </p>
      <p class="field">
        <label for={`${props.id}-mode`}>Delivery</label>
        <select id={`${props.id}-mode`}>
          <option value="copy">Copy: keep the outputs here too</option>
          <option value="only">Only there: remove the copy here once delivered</option>
        </select>
      </p>
    </fieldset>
  );
}

export function Presets() {
  return (
    <>
      <section id="run-section" class="card" aria-labelledby="run-heading" hidden>
        <h2 id="run-heading">Run <span id="run-name" class="mono"></span></h2>
        <p id="run-description" class="hint"></p>
        <pre id="run-command" class="code"></pre>
        <form id="run-form" novalidate>
          <div id="run-fields"></div>
          <DeliverTo id="run-destination" />
          <p class="actions"><button type="submit" id="run-preset">Run</button> <button type="button" id="close-run" class="secondary">Close</button></p>
        </form>
      </section>
      <section aria-labelledby="builtin-heading">
        <h2 id="builtin-heading">Built-in presets</h2>
        <ScrollTable id="builtin-presets" caption={{ id: "builtin-caption", text: "Built-in presets, available to everyone" }} columns={PRESET_COLUMNS} />
      </section>
      <section aria-labelledby="own-heading">
        <h2 id="own-heading">Your presets</h2>
        <ScrollTable id="own-presets" caption={{ id: "own-caption", text: "Your presets" }} columns={OWN_PRESET_COLUMNS} />
        <p id="own-empty" hidden>No presets of your own yet: save one below.</p>
      </section>
      <form id="preset-form" class="card" novalidate aria-labelledby="preset-form-heading">
        <h2 id="preset-form-heading">New preset</h2>
        <p class="hint">Write <code>{"{{name}}"}</code> in the command where a parameter's value goes; each value stays one argument.</p>
        <Field id="preset-name" label="Name" hint="Lower-case letters, digits, '-' or '_'">
          <input id="preset-name" name="name" required maxlength={64} autocapitalize="off" spellcheck={false} aria-describedby="preset-name-hint preset-name-error" />
        </Field>
        <Field id="preset-description" label="Description (optional)">
          <input id="preset-description" name="description" maxlength={500} aria-describedby="preset-description-error" />
        </Field>
        <Field id="preset-command" label="Command">
          <textarea id="preset-command" name="command" rows={3} required spellcheck={false} autocapitalize="off" aria-describedby="preset-command-error" placeholder="ffmpeg -i {{input}} -vf scale={{width}}:-2 out.mp4"></textarea>
        </Field>
        <Field id="preset-parameters" label="Parameters (JSON Schema)" hint="An object schema: integer, number, string or boolean properties, with minimum/maximum, enum, default, examples and required.">
          <textarea id="preset-parameters" name="parameters" rows={10} spellcheck={false} autocapitalize="off" aria-describedby="preset-parameters-hint preset-parameters-error">{EXAMPLE_PARAMETERS}</textarea>
        </Field>
        <DeliverTo id="preset-destination" />
        <p class="actions"><button type="submit" id="save-preset">Save preset</button> <button type="button" id="cancel-edit" class="secondary" hidden>Cancel editing</button></p>
      </form>
    </>
  );
}

export function Destinations() {
  return (
    <>
      <p>Task outputs can also be delivered to your own S3-compatible bucket (AWS S3, Cloudflare R2, Google Cloud Storage, MinIO). Credentials are stored encrypted and never shown again: only a fingerprint.</p>
      <ScrollTable id="destination-table" caption={{ id: "destination-caption", text: "Your destinations" }} columns={["Name", "Bucket", "Endpoint", "Credentials", "Status", ACTIONS]} />
      <p id="destination-empty" hidden>No destinations yet.</p>
      <form id="destination-form" class="card" novalidate aria-labelledby="destination-form-heading">
        <h2 id="destination-form-heading">Add a destination</h2>
        <Field id="destination-name" label="Name"><input id="destination-name" name="name" required maxlength={64} autocapitalize="off" spellcheck={false} aria-describedby="destination-name-error" placeholder="archive" /></Field>
        <Field id="destination-endpoint" label="Endpoint (empty for AWS S3)"><input id="destination-endpoint" name="endpoint" type="url" maxlength={2048} aria-describedby="destination-endpoint-error" placeholder="https://0123456789abcdef.r2.cloudflarestorage.com" /></Field>
        <Field id="destination-region" label="Region"><input id="destination-region" name="region" required maxlength={32} value="auto" autocapitalize="off" aria-describedby="destination-region-error" /></Field>
        <Field id="destination-bucket" label="Bucket"><input id="destination-bucket" name="bucket" required maxlength={63} autocapitalize="off" spellcheck={false} aria-describedby="destination-bucket-error" /></Field>
        <Field id="destination-prefix" label="Key prefix (optional)"><input id="destination-prefix" name="prefix" maxlength={512} autocapitalize="off" spellcheck={false} aria-describedby="destination-prefix-error" placeholder="ffedge/" /></Field>
        {/* Editing, the script fills #destination-credentials-hint: both key fields empty keep the stored pair. */}
        <p id="destination-credentials-hint" class="hint"></p>
        <Field id="destination-access_key_id" label="Access key id"><input id="destination-access_key_id" name="access_key_id" required maxlength={128} autocomplete="off" autocapitalize="off" spellcheck={false} aria-describedby="destination-credentials-hint destination-access_key_id-error" /></Field>
        <Field id="destination-secret_access_key" label="Secret access key" hint="Write-only: it is never shown back.">
          <input id="destination-secret_access_key" name="secret_access_key" type="password" required maxlength={256} autocomplete="new-password" aria-describedby="destination-credentials-hint destination-secret_access_key-hint destination-secret_access_key-error" />
        </Field>
        <Field id="destination-path_style" label="Addressing">
          <select id="destination-path_style" name="path_style" aria-describedby="destination-path_style-error">
            <option value="">Default: path-style with an endpoint, virtual-hosted for AWS S3</option>
            <option value="true">Path-style (endpoint/bucket/key)</option>
            <option value="false">Virtual-hosted (bucket.host/key)</option>
          </select>
        </Field>
        <p class="actions"><button type="submit" id="add-destination">Add destination</button> <button type="button" id="cancel-destination-edit" class="secondary" hidden>Cancel editing</button></p>
      </form>
    </>
  );
}

/** Registered endpoints on the Webhooks page: subscribe once to events of every task. The events offered are the API's own list. */
export function Endpoints() {
  return (
    <section aria-labelledby="endpoints-heading">
      <h2 id="endpoints-heading">Endpoints</h2>
      <p>An endpoint receives the events it subscribes to for all your tasks, signed with its own secret, without a webhook URL on each task.</p>
      <ScrollTable id="endpoint-table" caption={{ id: "endpoint-caption", text: "Your webhook endpoints" }} columns={["URL", "Events", "Enabled", ACTIONS]} />
      <p id="endpoint-empty" hidden>No endpoints yet.</p>
      <section id="endpoint-secret" class="card notice" hidden aria-labelledby="endpoint-secret-heading">
        <h2 id="endpoint-secret-heading">Signing secret of <span id="endpoint-secret-url" class="mono"></span></h2>
        <p>Copy it now: it is shown only once.</p>
        <p class="copyrow">
          <label for="endpoint-secret-value" class="sr-only">Endpoint signing secret</label>
          <input id="endpoint-secret-value" readonly class="mono" />
          <button type="button" id="copy-endpoint-secret">Copy</button>
        </p>
      </section>
      <form id="endpoint-form" class="card" novalidate aria-labelledby="endpoint-form-heading">
        <h2 id="endpoint-form-heading">Add an endpoint</h2>
        <Field id="endpoint-url" label="URL"><input id="endpoint-url" name="url" type="url" required maxlength={2048} aria-describedby="endpoint-url-error" placeholder="https://hooks.example.com/ffedge" /></Field>
        <Field id="endpoint-description" label="Description (optional)"><input id="endpoint-description" name="description" maxlength={200} aria-describedby="endpoint-description-error" /></Field>
        <fieldset id="endpoint-events-fieldset" tabindex={-1} aria-describedby="endpoint-events-fieldset-error">
          <legend>Events</legend>
          {ENDPOINT_EVENT_TYPES.map((type) => (
            <p class="field">
              <input id={`event-${type}`} name="events" type="checkbox" value={type} checked={DEFAULT_EVENTS.has(type)} />
              <label for={`event-${type}`} class="mono">{type}</label>
            </p>
          ))}
          <span id="endpoint-events-fieldset-error" class="field-error" hidden></span>
        </fieldset>
        <p class="actions"><button type="submit" id="add-endpoint">Add endpoint</button> <button type="button" id="cancel-endpoint-edit" class="secondary" hidden>Cancel editing</button></p>
      </form>
      <section id="endpoint-log" hidden aria-labelledby="endpoint-log-heading">
        <h3 id="endpoint-log-heading">Deliveries to <span id="endpoint-log-url" class="mono"></span></h3>
        <ScrollTable id="endpoint-events" columns={["Event", "Task", "When", "Delivered", "Last answer", ACTIONS]} />
        <p id="endpoint-log-empty" hidden>Nothing sent to this endpoint yet.</p>
      </section>
    </section>
  );
}
