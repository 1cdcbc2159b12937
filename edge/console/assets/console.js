// The console's browser code: one small module, no framework. Every string that came from a
// user or the API reaches the page through textContent or attributes (el()), never innerHTML.

const API = "/console/api";
let csrfToken = null;

class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `Request failed (${status})`);
    this.status = status;
    this.problem = problem;
  }
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

const $ = (selector) => document.querySelector(selector);

async function api(path, options = {}) {
  const headers = new Headers(options.headers);
  let body = options.body;
  if (options.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(options.json);
  }
  const method = options.method || "GET";
  if (method !== "GET" && csrfToken) headers.set("x-csrf-token", csrfToken);
  const response = await fetch(API + path, { method, headers, body, credentials: "same-origin" });
  if (response.status === 401 && !options.expect401) {
    toSignIn("expired");
    throw new ApiError(401, { detail: "Your session has ended." });
  }
  // A body that is not JSON still leaves the status to report.
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => ({})));
  if (response.status === 204) return null;
  return response.json();
}

function toSignIn(reason) {
  const next = location.pathname + location.search;
  location.assign(`/console/signin?${new URLSearchParams({ next, reason })}`);
}

function flash(message, kind = "error") {
  const box = $("#flash");
  box.textContent = message;
  box.className = kind === "info" ? "flash info" : "flash";
  box.setAttribute("role", kind === "info" ? "status" : "alert");
  box.hidden = false;
}

function clearFlash() {
  $("#flash").hidden = true;
}

function announce(message) {
  const region = $("#announcer");
  region.textContent = "";
  // A fresh text node after clearing makes screen readers read it even when it repeats.
  setTimeout(() => (region.textContent = message), 50);
}

/** Runs a form's action with its submit button disabled, showing any error in the flash box. */
function onSubmit(form, action) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFlash();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      await action(new FormData(form));
    } catch (error) {
      flash(error.message);
    } finally {
      button.disabled = false;
    }
  });
}

function guarded(action) {
  return async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    clearFlash();
    try {
      await action(event);
    } catch (error) {
      flash(error.message);
    } finally {
      button.disabled = false;
    }
  };
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const field = button.parentElement.querySelector("input");
    field.select();
    document.execCommand("copy");
  }
  const label = button.textContent;
  button.textContent = "Copied";
  announce("Copied to the clipboard");
  setTimeout(() => (button.textContent = label), 2000);
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0).replace(/\.0$/, "")} ${units[unit]}`;
}

function formatDuration(seconds) {
  seconds = Math.max(0, Math.round(seconds));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  if (m > 0) return s > 0 ? `${m} min ${s} s` : `${m} min`;
  return `${s} s`;
}

function formatTime(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return el("time", { datetime: iso, title: iso }, date.toLocaleString());
}

function statusBadge(status) {
  return el("span", { class: `status status-${status}` }, status);
}

/** A canceled task keeps FFHub's status "failed"; the console says what happened (canceled_at, error_code CANCELED). */
function shownStatus(task) {
  return task.canceled_at || (task.status === "failed" && task.error_code === "CANCELED") ? "canceled" : task.status;
}

// ---- Signed-out pages --------------------------------------------------------------------

function signinPage() {
  const params = new URLSearchParams(location.search);
  if (params.get("reason") === "expired") flash("Your session has ended. Sign in again.");
  if (params.get("reason") === "signedout") flash("You are signed out.", "info");
  if (params.get("reason") === "reset") flash("Your password is set. Sign in with it.", "info");
  if (params.get("reason") === "verified") flash("Your address is verified. Sign in.", "info");
  onSubmit($("#signin-form"), async (form) => {
    try {
      await api("/auth/signin", { method: "POST", json: { email: form.get("email"), password: form.get("password") }, expect401: true });
    } catch (error) {
      if (error.status === 401) throw new Error("Wrong email or password.");
      throw error;
    }
    const next = params.get("next");
    location.assign(next && next.startsWith("/console/") && !next.startsWith("//") ? next : "/console/tasks");
  });
}

/**
 * Sign-up and forgot-password answer only once their mail is sent. When it could not be (503
 * MAIL_NOT_SENT) or too many were asked for (429 TOO_MANY_ATTEMPTS), the form keeps what was
 * typed and the message carries a button that sends it again once the wait the service asked
 * for (retry_after) is over.
 */
async function mailRequest(formElement, path, json) {
  try {
    return await api(path, { method: "POST", json });
  } catch (error) {
    const code = error.problem && error.problem.code;
    if (code !== "MAIL_NOT_SENT" && code !== "TOO_MANY_ATTEMPTS") throw error;
    const wait = Math.max(1, Number(error.problem.retry_after) || 60);
    const when = wait >= 90 * 60 ? "in about an hour" : wait >= 90 ? `in ${Math.ceil(wait / 60)} minutes` : `in ${wait} seconds`;
    const why = code === "MAIL_NOT_SENT" ? "We could not send the mail." : "Too many mails were asked for this address or from your network.";
    flash(`${why} Try again ${when}. `);
    const retry = el("button", { type: "button", class: "secondary", id: "mail-retry", disabled: true, onclick: () => formElement.requestSubmit() }, "Try again");
    $("#flash").append(retry);
    setTimeout(() => {
      retry.disabled = false;
    }, wait * 1000);
    return null;
  }
}

function signupPage() {
  const formElement = $("#signup-form");
  onSubmit(formElement, async (form) => {
    const answer = await mailRequest(formElement, "/auth/signup", { email: form.get("email"), password: form.get("password") });
    if (!answer) return;
    formElement.reset();
    flash(`${answer.message} Follow the link in the mail to finish.`, "info");
  });
}

async function verifyPage() {
  const token = new URLSearchParams(location.search).get("token");
  const status = $("#verify-status");
  if (!token) {
    status.textContent = "This link has no token. Open the link from the mail again.";
    return;
  }
  try {
    const answer = await api("/auth/verify", { method: "POST", json: { token } });
    if (!answer.already_verified) return location.replace("/console/signin?reason=verified");
    status.textContent = "This address is already verified: sign in with the password you chose.";
  } catch (error) {
    if (!error.problem || error.problem.code !== "INVALID_TOKEN") throw error;
    status.textContent = `This link does not work: it has expired (links last 24 hours) or is not one we sent. Sign up again to get a new link. If this address already signed up, set its password through "Forgot password".`;
  }
}

function forgotPage() {
  const formElement = $("#forgot-form");
  onSubmit(formElement, async (form) => {
    const answer = await mailRequest(formElement, "/auth/forgot", { email: form.get("email") });
    if (answer) flash(answer.message, "info");
  });
}

async function resetPage() {
  const token = new URLSearchParams(location.search).get("token") || "";
  await checkResetLink(token);
  onSubmit($("#reset-form"), async (form) => {
    await api("/auth/reset", { method: "POST", json: { token, password: form.get("password") } });
    location.assign("/console/signin?reason=reset");
  });
}

/** A reset link that can no longer work is said at once, before a password is typed, with a way to ask again. */
async function checkResetLink(token) {
  try {
    await api("/auth/reset/check", { method: "POST", json: { token } });
  } catch (error) {
    if (!error.problem || (error.problem.code !== "INVALID_TOKEN" && error.problem.code !== "VALIDATION_FAILED")) throw error;
    $("#reset-form").parentElement.hidden = true;
    $("#reset-dead").hidden = false;
  }
}

// ---- Tasks ---------------------------------------------------------------------------------

const PAGE_SIZE = 20;
// Browsers allow six HTTP/1.1 connections per origin; each event stream holds one open, so the
// list follows at most this many tasks live and refreshes the rest by re-reading the page.
const MAX_LIVE_STREAMS = 3;

async function tasksPage() {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") || "";
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  const pageSize = Math.min(100, Math.max(1, Number(params.get("limit")) || PAGE_SIZE));
  const select = $("#status");
  select.value = status;
  select.addEventListener("change", () => {
    const next = new URLSearchParams();
    if (select.value) next.set("status", select.value);
    if (params.get("limit")) next.set("limit", String(pageSize));
    location.assign(`/console/tasks?${next}`);
  });
  $("#task-filter").addEventListener("submit", (event) => event.preventDefault());
  const go = (to) => {
    const next = new URLSearchParams(params);
    next.set("offset", String(to));
    location.assign(`/console/tasks?${next}`);
  };
  $("#prev-page").addEventListener("click", () => go(Math.max(0, offset - pageSize)));
  $("#next-page").addEventListener("click", () => go(offset + pageSize));

  const streams = new Map();
  let refreshTimer = null;
  const load = async () => {
    const query = new URLSearchParams({ limit: String(pageSize), offset: String(offset) });
    if (status) query.set("status", status);
    const list = await api(`/v1/tasks?${query}`);
    const rows = list.tasks.map((task) => taskRow(task));
    $("#task-table tbody").replaceChildren(...rows);
    await showSummaries(list.tasks);
    showEmptyTasks(list.total, status);
    $("#task-table").parentElement.hidden = list.tasks.length === 0;
    $(".pager").hidden = list.total === 0;
    $("#page-info").textContent = list.total === 0 ? "" : `${offset + 1}–${offset + list.tasks.length} of ${list.total}`;
    $("#task-count").textContent = `Your tasks: ${list.total}`;
    $("#prev-page").disabled = offset === 0;
    $("#next-page").disabled = offset + list.tasks.length >= list.total;
    const active = list.tasks.filter((task) => task.status === "pending" || task.status === "running");
    for (const [id, source] of streams) {
      if (active.some((task) => task.task_id === id)) continue;
      source.close();
      streams.delete(id);
    }
    const lost = (id) => {
      streams.delete(id);
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(load, 5000);
    };
    for (const task of active.slice(0, MAX_LIVE_STREAMS)) if (!streams.has(task.task_id)) streams.set(task.task_id, followRow(task.task_id, load, lost));
    clearTimeout(refreshTimer);
    if (active.length > streams.size) refreshTimer = setTimeout(load, 5000);
  };
  await load();
}

/**
 * No tasks at all: the getting-started. None with the chosen status: says so, since the account
 * may well have others.
 */
function showEmptyTasks(total, status) {
  const empty = $("#task-empty");
  empty.hidden = total > 0 || !status;
  $("#getting-started").hidden = total > 0 || Boolean(status);
  if (status && total === 0) empty.replaceChildren(`No ${status} tasks. `, el("a", { href: "/console/tasks" }, "Show all tasks"));
}

function taskRow(task) {
  return el(
    "tr",
    { id: `row-${task.task_id}` },
    el("td", { "data-label": "Task" }, el("a", { href: `/console/tasks/${encodeURIComponent(task.task_id)}`, class: "mono" }, task.task_id)),
    el("td", { class: "command", title: task.command, "data-label": "Command" }, task.command),
    el("td", { class: "status-cell", "data-label": "Status" }, statusBadge(shownStatus(task))),
    ...taskFacts(task),
    el("td", { "data-label": "Created" }, formatTime(task.created_at)),
  );
}

/** Follows one listed task's event stream and updates its row; reloads the list when it ends. */
function followRow(taskId, reload, lost) {
  const source = new EventSource(`${API}/v1/tasks/${encodeURIComponent(taskId)}/events`);
  const update = (event) => {
    const data = JSON.parse(event.data);
    const row = document.getElementById(`row-${taskId}`);
    if (!row) return;
    if (data.status) row.querySelector(".status-cell").replaceChildren(statusBadge(shownStatus(data)));
    if (typeof data.progress === "number") {
      row.querySelector(".progress-cell").replaceChildren(el("progress", { max: 100, value: data.progress, "aria-label": `Progress of ${taskId}` }), ` ${data.progress}%`);
    }
  };
  source.addEventListener("status", update);
  source.addEventListener("progress", update);
  for (const end of ["completed", "failed"]) {
    source.addEventListener(end, (event) => {
      update(event);
      source.close();
      announce(`Task ${taskId} ${end}`);
      reload();
    });
  }
  source.onerror = () => {
    source.close();
    lost(taskId);
  };
  return source;
}

async function taskPage() {
  const taskId = document.body.dataset.taskId;
  const path = `/v1/tasks/${encodeURIComponent(taskId)}`;
  let task;
  try {
    task = await api(path);
  } catch (error) {
    if (error.status === 404) {
      $("#task-missing").hidden = false;
      return;
    }
    throw error;
  }
  $("#task-body").hidden = false;
  $("#task-command").textContent = task.command;
  showTask(task);
  setUpTaskTools(task);
  loadDeliveries(taskId);
  if (task.status === "pending" || task.status === "running") followTask(taskId);
  else loadLog(taskId);

  $("#cancel-task").addEventListener("click", guarded(async () => {
    await api(`${path}/cancel`, { method: "POST" });
    announce("Cancel requested");
  }));
  $("#delete-task").addEventListener("click", guarded(async () => {
    if (!confirm("Delete this task, its outputs and its log?")) return;
    await api(path, { method: "DELETE" });
    location.assign("/console/tasks");
  }));
  $("#redeliver").addEventListener("click", guarded(async () => {
    const before = await loadDeliveries(taskId);
    await api(`${path}/webhooks/redeliver`, { method: "POST" });
    announce("Redelivery queued");
    // The attempt goes through the queue; show it once it has been made.
    for (let i = 0; i < 15; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if ((await loadDeliveries(taskId)) > before) return announce("Redelivery attempted");
    }
  }));
}

function showTask(task) {
  const previous = $("#task-status").textContent;
  const status = shownStatus(task);
  $("#task-status").replaceChildren(statusBadge(status));
  if (previous && previous !== status) announce(`Task ${status}`);
  $("#task-progress").value = task.progress;
  $("#task-percent").textContent = `${task.progress}%`;
  $("#task-eta").textContent = task.status === "running" && typeof task.eta_seconds === "number" ? `· about ${formatDuration(task.eta_seconds)} left` : "";
  const finished = task.status === "completed" || task.status === "failed";
  $("#cancel-task").hidden = finished;
  $("#delete-task").hidden = !finished;
  const errorBox = $("#task-error");
  errorBox.hidden = !task.error;
  errorBox.textContent = task.error ? `${task.error_code ? `${task.error_code}: ` : ""}${task.error}` : "";
  const times = [["Created", task.created_at], ["Started", task.started_at], ["Finished", task.finished_at]];
  $("#task-times").replaceChildren(...times.filter(([, value]) => value !== undefined).flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, formatTime(value))]));
  showElapsed(task);
  if (task.outputs && task.outputs.length) {
    showOutputs(task.outputs);
    showPreviews(task.outputs);
  }
}

function showOutputs(outputs) {
  $("#no-outputs").hidden = true;
  $("#task-outputs").replaceChildren(
    ...outputs.map((output) =>
      el(
        "li",
        {},
        el("a", { href: output.url, download: output.filename, class: "mono" }, output.filename),
        ` · ${formatBytes(output.size)} `,
        el("button", { type: "button", class: "secondary", onclick: (event) => copy(output.url, event.currentTarget) }, "Copy URL"),
        el("input", { type: "hidden", value: output.url }),
        output.metadata ? el("details", {}, el("summary", {}, "Metadata"), el("pre", { class: "code" }, JSON.stringify(output.metadata, null, 2))) : null,
      ),
    ),
  );
}

function followTask(taskId) {
  const source = new EventSource(`${API}/v1/tasks/${encodeURIComponent(taskId)}/events`);
  const current = {};
  const update = (event) => {
    Object.assign(current, JSON.parse(event.data));
    showTask(current);
  };
  source.addEventListener("status", update);
  source.addEventListener("progress", update);
  for (const end of ["completed", "failed"]) {
    source.addEventListener(end, async (event) => {
      source.close();
      update(event);
      // The end event carries the outputs; re-read the task for its timestamps, then the log.
      showTask(await api(`/v1/tasks/${encodeURIComponent(taskId)}`));
      loadLog(taskId);
      awaitFirstDelivery(taskId);
    });
  }
  source.onerror = async () => {
    source.close();
    const task = await api(`/v1/tasks/${encodeURIComponent(taskId)}`);
    showTask(task);
    if (task.status === "pending" || task.status === "running") setTimeout(() => followTask(taskId), 2000);
    else loadLog(taskId);
  };
}

async function loadLog(taskId) {
  const response = await fetch(`${API}/v1/tasks/${encodeURIComponent(taskId)}/logs`, { credentials: "same-origin" });
  $("#task-log").textContent = response.ok ? await response.text() : "No log is stored for this task.";
}

/** A webhook is first tried just after the task ends: keep looking for a short while. */
async function awaitFirstDelivery(taskId) {
  for (let i = 0; i < 15; i++) {
    if ((await loadDeliveries(taskId)) > 0 || $("#redeliver").hidden) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

async function loadDeliveries(taskId) {
  const list = await api(`/v1/tasks/${encodeURIComponent(taskId)}/webhooks`);
  $("#webhook-url").textContent = list.webhook_url ? `Webhook: ${list.webhook_url}` : "This task has no webhook.";
  $("#redeliver").hidden = !(list.webhook_url && list.webhook_id);
  $("#delivery-table").parentElement.hidden = list.deliveries.length === 0;
  $("#delivery-table tbody").replaceChildren(
    ...list.deliveries.map((delivery) =>
      el(
        "tr",
        {},
        el("td", {}, `${delivery.attempt}${delivery.redelivery ? " (redelivery)" : ""}`),
        el("td", {}, formatTime(delivery.attempted_at)),
        el("td", { class: delivery.success ? "" : "error" }, delivery.status_code === null ? "no answer" : String(delivery.status_code)),
        el("td", {}, delivery.latency_ms === null ? "—" : `${delivery.latency_ms} ms`),
        el("td", {}, delivery.error || ""),
      ),
    ),
  );
  return list.deliveries.length;
}

// ---- Telling tasks apart: summaries, outputs, duration, error, previews, copy-as, re-run ----

const SUMMARY_WIDTH = 90;

/**
 * The list's duration, outputs and error cells (each with its card label for narrow screens). An
 * unfinished task's duration cell shows its progress instead, which its event stream updates.
 */
function taskFacts(task) {
  const outputs = task.outputs || [];
  const names = outputs.map((output) => output.filename);
  const shown = names.length > 2 ? `${names.slice(0, 2).join(", ")} +${names.length - 2} more` : names.join(", ");
  const error = shortError(task);
  const unfinished = task.status === "pending" || task.status === "running";
  const time = unfinished
    ? [el("progress", { max: 100, value: task.progress, "aria-label": `Progress of ${task.task_id}` }), ` ${task.progress}%`]
    : [task.elapsed === null || task.elapsed === undefined ? "—" : formatDuration(Number(task.elapsed))];
  return [
    el("td", { class: "progress-cell duration-cell", "data-label": "Duration" }, ...time),
    el("td", { class: "outputs-cell", "data-label": "Outputs", title: names.join("\n") || null }, outputs.length ? `${outputs.length} · ${shown}` : "—"),
    el("td", { class: error ? "error-cell error" : "error-cell", "data-label": "Error", title: task.error || null }, error || "—"),
  ];
}

/** The error's first line, cut short; the whole of it is the cell's title and on the task page. */
function shortError(task) {
  if (!task.error && !task.error_code) return "";
  if (shownStatus(task) === "canceled") return "canceled";
  const line = (task.error || "").split("\n").find((text) => text.trim()) || "";
  const text = `${task.error_code ? `${task.error_code}: ` : ""}${line.trim()}`;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** Replaces each listed command by its summary: inputs by the names they were uploaded under, outputs, options. */
async function showSummaries(tasks) {
  if (!tasks.length) return;
  let summaries;
  try {
    ({ summaries } = await api(`/task-summaries?ids=${tasks.map((task) => encodeURIComponent(task.task_id)).join(",")}`));
  } catch (error) {
    if (error.status === 401) throw error;
    return; // The commands as written stay; the list is still usable.
  }
  for (const task of tasks) {
    const summary = summaries[task.task_id];
    const cell = document.querySelector(`#row-${CSS.escape(task.task_id)} .command`);
    if (!summary || !cell) continue;
    const text = summary.text.length > SUMMARY_WIDTH ? `${summary.text.slice(0, SUMMARY_WIDTH - 1)}…` : summary.text;
    cell.replaceChildren(text);
  }
}

const elapsedClock = { seconds: null, at: 0, status: "", timer: null };

/** The heading: "Task tsk_… · running for 12 s", ticking while the task runs. */
function showElapsed(task) {
  if (task.elapsed !== undefined) {
    elapsedClock.seconds = task.elapsed === null ? null : Number(task.elapsed);
    elapsedClock.at = Date.now();
  } else if (task.status === "running" && elapsedClock.seconds === null) {
    elapsedClock.seconds = 0;
    elapsedClock.at = Date.now();
  }
  if (task.status) elapsedClock.status = task.status;
  let span = $("#task-elapsed");
  if (!span) {
    span = el("span", { id: "task-elapsed", class: "elapsed" });
    $("main h1").append(" ", span);
  }
  const render = () => {
    const { seconds, at, status } = elapsedClock;
    const running = status === "running";
    const now = seconds === null ? null : seconds + (running ? (Date.now() - at) / 1000 : 0);
    span.textContent = now === null ? (status === "pending" ? "· waiting to start" : "") : `· ${running ? "running for" : "ran"} ${formatDuration(now)}`;
  };
  render();
  clearInterval(elapsedClock.timer);
  if (elapsedClock.status === "running") elapsedClock.timer = setInterval(render, 1000);
}

const PREVIEWS = {
  video: ["mp4", "m4v", "webm", "ogv", "mov"],
  audio: ["mp3", "m4a", "aac", "wav", "ogg", "oga", "opus", "flac", "weba"],
  image: ["jpg", "jpeg", "png", "gif", "webp", "avif", "bmp"],
};
const MAX_PREVIEWS = 4;

/** Outputs the browser can show, played or shown straight from the CDN (which serves them inline, sandboxed). */
function showPreviews(outputs) {
  const box = $("#task-previews");
  const figures = [];
  for (const output of outputs) {
    const extension = output.filename.split(".").pop().toLowerCase();
    const kind = Object.keys(PREVIEWS).find((candidate) => PREVIEWS[candidate].includes(extension));
    if (!kind || figures.length >= MAX_PREVIEWS) continue;
    const label = `Preview of ${output.filename}`;
    const media =
      kind === "image" ? el("img", { src: output.url, alt: label, loading: "lazy" })
      : el(kind, { src: output.url, controls: true, preload: "metadata", "aria-label": label });
    figures.push(el("figure", { class: `preview preview-${kind}` }, media, el("figcaption", { class: "mono" }, output.filename)));
  }
  if (box.childElementCount !== figures.length) box.replaceChildren(...figures);
}

/** POSIX shell quoting inside double quotes. */
function shellDoubleQuoted(text) {
  return `"${text.replace(/(["\\$`])/g, "\\$1")}"`;
}

function shellSingleQuoted(text) {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** The same task from a terminal or a program, with this deployment's URL and a placeholder for the key. */
function snippetsFor(task) {
  const base = (document.body.dataset.apiUrl || location.origin).replace(/\/$/, "");
  const body = { command: task.command };
  if (task.with_metadata) body.with_metadata = true;
  return [
    ["curl", `curl -X POST ${base}/v1/tasks \\\n  -H "Authorization: Bearer $FFEDGE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellSingleQuoted(JSON.stringify(body))}`],
    ["CLI", `export FFEDGE_URL=${base} FFEDGE_API_KEY=ffe_…\nffedge run ${shellDoubleQuoted(task.command)}`],
    ["SDK", `import { FFedge } from "@ffedge/sdk";\n\nconst ff = new FFedge({ apiKey: process.env.FFEDGE_API_KEY, baseUrl: ${JSON.stringify(base)} });\nconst task = await ff.run(${JSON.stringify(task.command)});\nconsole.log(task.outputs);`],
  ];
}

function showSnippets(task) {
  $("#copy-snippets").replaceChildren(
    ...snippetsFor(task).map(([label, text]) => {
      const id = `snippet-${label.toLowerCase()}`;
      return el(
        "div",
        { class: "snippet" },
        el("p", { class: "copyrow" }, el("strong", { id: `${id}-label` }, label), " ", el("button", { type: "button", class: "secondary", "aria-label": `Copy as ${label}`, onclick: (event) => copy(text, event.currentTarget) }, "Copy"), el("input", { type: "hidden", value: text })),
        el("pre", { class: "code", id, "aria-labelledby": `${id}-label`, tabindex: 0 }, text),
      );
    }),
  );
}

function randomKey() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Run again: the same command as a new task through the public API, once per click (a fresh Idempotency-Key). */
function setUpTaskTools(task) {
  showSnippets(task);
  $("#edit-task").href = `/console/new?from=${encodeURIComponent(task.task_id)}`;
  $("#rerun-task").addEventListener("click", guarded(async () => {
    const body = { command: task.command, with_metadata: Boolean(task.with_metadata) };
    // Webhooks that cannot be read leave the re-run without one, like a task that had none.
    const hooks = await api(`/v1/tasks/${encodeURIComponent(task.task_id)}/webhooks`).catch(() => null);
    if (hooks && hooks.webhook_url) body.webhook = hooks.webhook_url;
    const created = await api("/v1/tasks", { method: "POST", json: body, headers: { "Idempotency-Key": `console-rerun-${randomKey()}` } });
    location.assign(`/console/tasks/${encodeURIComponent(created.task_id)}`);
  }));
}

/** Files of the same name told apart: size, upload time and the end of their key. */
function fileIdentity(file) {
  const stem = file.key.split("/").pop().replace(/\.[^.]*$/, "");
  const uploaded = file.created_at ? new Date(file.created_at).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }) : null;
  return [formatBytes(file.size), uploaded && `uploaded ${uploaded}`, `…${stem.slice(-6)}`].filter(Boolean).join(" · ");
}

/** Fills the composer from a recipe: the picked file as its video, the newest file of each other kind it needs. */
function applyRecipe(button, files, picker, textarea) {
  const kinds = button.dataset.inputs.split(",");
  const picked = files.find((file) => file.url === picker.value);
  const newest = (kind) => files.find((file) => fileKind(file) === kind);
  const missing = [];
  let command = button.dataset.command;
  for (const kind of kinds) {
    const file = kind === "video" && picked && fileKind(picked) === "video" ? picked : newest(kind);
    if (file) command = command.split(`{${kind}}`).join(file.url);
    else missing.push(kind);
  }
  textarea.value = command;
  textarea.dispatchEvent(new Event("input"));
  textarea.focus();
  const what = { video: "a video", image: "an image (PNG or JPEG)", subtitles: "a subtitles file (SRT, VTT or ASS)" };
  $("#recipe-note").textContent = missing.length
    ? `Replace ${missing.map((kind) => `{${kind}}`).join(" and ")} with the URL of ${missing.map((kind) => what[kind]).join(" and ")}, or upload one on the Files page.`
    : `${button.textContent}: filled with ${kinds.map((kind) => fileName(kind === "video" && picked && fileKind(picked) === "video" ? picked : newest(kind))).join(" and ")}.`;
}

function fileKind(file) {
  const type = (file.content_type || "").split(";")[0];
  const extension = fileName(file).split(".").pop().toLowerCase();
  if (/^(video|audio)\//.test(type)) return "video";
  if (/^image\//.test(type) && type !== "image/svg+xml") return "image";
  if (["srt", "vtt", "ass", "ssa"].includes(extension) || /subrip|vtt|ssa/.test(type)) return "subtitles";
  return "other";
}

// ---- Command composer ----------------------------------------------------------------------

async function composerPage() {
  const textarea = $("#command");
  const verdict = $("#verdict");
  const marked = $("#command-marked");
  let sequence = 0;
  let timer = null;

  const check = async () => {
    const command = textarea.value.trim();
    const mine = ++sequence;
    if (!command) {
      verdict.textContent = "";
      verdict.className = "verdict";
      marked.hidden = true;
      textarea.removeAttribute("aria-invalid");
      return;
    }
    let answer;
    try {
      answer = { ok: true, body: await api("/v1/tasks/validate", { method: "POST", json: { command } }) };
    } catch (error) {
      if (!error.problem) throw error;
      answer = { ok: false, error };
    }
    if (mine !== sequence) return;
    if (answer.ok) {
      verdict.className = "verdict ok";
      verdict.textContent = `Accepted: ${answer.body.inputs.length} input(s), outputs ${answer.body.outputs.join(", ") || "none"}.`;
      textarea.setAttribute("aria-invalid", "false");
      marked.hidden = true;
    } else {
      verdict.className = "verdict bad";
      verdict.textContent = `Refused (${answer.error.problem.code || answer.error.status}): ${answer.error.message}`;
      textarea.setAttribute("aria-invalid", "true");
      showRefusedToken(marked, textarea.value, answer.error.problem.token);
    }
  };
  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => check().catch((error) => flash(error.message)), 300);
  });

  const picker = $("#file-pick");
  const files = pageFiles();
  picker.replaceChildren(
    el("option", { value: "" }, files.length ? "Choose a file…" : "No files yet: upload on the Files page"),
    ...files.map((file) => el("option", { value: file.url }, `${fileName(file)} (${fileIdentity(file)})`)),
  );
  for (const button of document.querySelectorAll("#recipes [data-recipe]")) button.addEventListener("click", () => applyRecipe(button, files, picker, textarea));
  const from = new URLSearchParams(location.search).get("from");
  if (from) {
    const source = await api(`/v1/tasks/${encodeURIComponent(from)}`);
    textarea.value = source.command;
    $("#with-metadata").checked = Boolean(source.with_metadata);
    textarea.dispatchEvent(new Event("input"));
  }
  $("#insert-input").addEventListener("click", () => {
    if (!picker.value) return;
    const position = textarea.selectionStart ?? textarea.value.length;
    const before = textarea.value.slice(0, position);
    const insertion = `${before && !before.endsWith(" ") ? " " : ""}-i ${picker.value} `;
    textarea.value = before + insertion + textarea.value.slice(position);
    textarea.focus();
    textarea.selectionStart = textarea.selectionEnd = position + insertion.length;
    textarea.dispatchEvent(new Event("input"));
  });

  onSubmit($("#composer"), async (form) => {
    const body = { command: textarea.value.trim(), with_metadata: form.get("with_metadata") === "on" };
    const webhook = String(form.get("webhook") || "").trim();
    if (webhook) body.webhook = webhook;
    const created = await api("/v1/tasks", { method: "POST", json: body });
    location.assign(`/console/tasks/${encodeURIComponent(created.task_id)}`);
  });
}

/** Shows the command with the refused token marked, built from text nodes only. */
function showRefusedToken(container, command, token) {
  const at = token ? command.indexOf(token) : -1;
  if (at < 0) {
    container.hidden = true;
    return;
  }
  container.replaceChildren(command.slice(0, at), el("mark", {}, token), command.slice(at + token.length));
  container.hidden = false;
}

// ---- Files -----------------------------------------------------------------------------------

/** The user's files, listed by the server into the page (there is no listing endpoint to call). */
function pageFiles() {
  return JSON.parse(document.body.dataset.files || "[]");
}

function fileName(file) {
  return file.filename || file.key.split("/").pop();
}

async function filesPage() {
  let files = pageFiles();
  const render = () => {
    $("#file-empty").hidden = files.length > 0;
    $("#file-table").parentElement.hidden = files.length === 0;
    $("#file-table tbody").replaceChildren(
      ...files.map((file) =>
        el(
          "tr",
          {},
          el("td", { "data-label": "File" }, el("a", { href: file.url, class: "mono" }, fileName(file)), el("br"), el("small", { class: "file-identity" }, fileIdentity(file))),
          el("td", {}, formatBytes(file.size)),
          el("td", {}, file.content_type),
          el("td", { class: "countdown", "data-expires": file.expires_at }, countdown(file.expires_at)),
          el(
            "td",
            { class: "actions" },
            el("input", { type: "hidden", value: file.url }),
            el("button", { type: "button", class: "secondary", "aria-label": `Copy URL of ${fileName(file)}`, onclick: (event) => copy(file.url, event.currentTarget) }, "Copy URL"),
            el("button", { type: "button", class: "danger", "aria-label": `Delete ${fileName(file)}`, onclick: guarded(async () => {
              if (!confirm(`Delete ${fileName(file)}?`)) return;
              await api(`/files/${encodeURIComponent(file.key)}`, { method: "DELETE" });
              announce(`${fileName(file)} deleted`);
              files = files.filter((other) => other.key !== file.key);
              render();
            }) }, "Delete"),
          ),
        ),
      ),
    );
  };
  render();
  setInterval(() => {
    for (const cell of document.querySelectorAll(".countdown")) cell.textContent = countdown(cell.dataset.expires);
  }, 1000);

  onSubmit($("#upload-form"), async (form) => {
    const file = form.get("file");
    if (!(file instanceof File) || file.size === 0) throw new Error("Choose a non-empty file first.");
    const bar = $("#upload-progress");
    const status = $("#upload-status");
    bar.hidden = false;
    bar.value = 0;
    status.textContent = `Uploading ${file.name}…`;
    status.classList.remove("error");
    let record;
    try {
      record = await tusUpload(file, (sent) => {
        bar.value = Math.floor((sent / file.size) * 100);
      });
    } catch (error) {
      bar.hidden = true;
      status.classList.add("error");
      status.textContent = `${file.name} was not uploaded. ${uploadRefusal(error, file)}`;
      return;
    }
    status.textContent = `${file.name} uploaded (${formatBytes(record.size)}).`;
    $("#upload-form").reset();
    files = [{ ...record, filename: file.name, created_at: new Date().toISOString() }, ...files];
    render();
  });
}

/** Why an upload was refused, in the user's terms rather than the tus protocol's (Upload-Length, offsets). */
function uploadRefusal(error, file) {
  const problem = error.problem || {};
  if (problem.code === "PAYLOAD_TOO_LARGE" && problem.limit) return `This file is ${formatBytes(file.size)}; the limit is ${formatBytes(problem.limit)}.`;
  if (problem.code === "EMPTY_FILE") return "The file is empty.";
  if (problem.code === "STORAGE_FULL" || problem.code === "STORAGE_UNAVAILABLE") return "Storage is not available right now; try again in a few minutes.";
  if (problem.code === "RATE_LIMITED") return "Too many requests at once; wait a minute and try again.";
  if (error.status === 401) return "Your session has ended; sign in again, then upload.";
  if (!error.status) return "The connection broke off; check the network and upload it again.";
  return error.message;
}

function countdown(expiresAt) {
  const left = (new Date(expiresAt).getTime() - Date.now()) / 1000;
  return left <= 0 ? "expired" : formatDuration(left);
}

// Resumable upload (tus 1.0, docs/uploads.md) in chunks small enough for any Cloudflare plan's
// request-body limit; XHR rather than fetch because only XHR reports upload progress.
const CHUNK_BYTES = 16 * 1024 * 1024;

async function tusUpload(file, onProgress) {
  const metadata = [`filename ${base64(file.name)}`];
  if (file.type) metadata.push(`filetype ${base64(file.type)}`);
  const created = await tusRequest("POST", `${API}/upload/tus`, { "Upload-Length": String(file.size), "Upload-Metadata": metadata.join(",") });
  const location = created.getResponseHeader("Location");
  let offset = 0;
  let last = null;
  while (offset < file.size) {
    const chunk = file.slice(offset, offset + CHUNK_BYTES);
    const start = offset;
    last = await tusRequest("PATCH", location, { "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" }, chunk, (sent) => onProgress(start + sent));
    offset = Number(last.getResponseHeader("Upload-Offset"));
    onProgress(offset);
  }
  return JSON.parse(last.getResponseHeader("Upload-Record"));
}

function tusRequest(method, url, headers, body = null, onProgress = null) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.setRequestHeader("Tus-Resumable", "1.0.0");
    if (csrfToken) xhr.setRequestHeader("x-csrf-token", csrfToken);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onProgress) xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr);
      else {
        let problem = {};
        try {
          problem = JSON.parse(xhr.responseText);
        } catch {}
        reject(new ApiError(xhr.status, problem));
      }
    };
    xhr.onerror = () => reject(new Error("The upload was interrupted by a network error."));
    xhr.send(body);
  });
}

function base64(text) {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

// ---- API keys ------------------------------------------------------------------------------

async function keysPage() {
  const render = async () => {
    const { keys } = await api("/keys");
    $("#key-table tbody").replaceChildren(
      ...keys.map((key) =>
        el(
          "tr",
          {},
          el("td", {}, key.name || "(unnamed)"),
          el("td", { class: "mono" }, key.prefix),
          el("td", {}, formatTime(key.created_at)),
          el("td", {}, key.last_used_at ? formatTime(key.last_used_at) : "never"),
          el(
            "td",
            {},
            key.revoked_at
              ? el("span", {}, "revoked ", formatTime(key.revoked_at))
              : el("button", { type: "button", class: "danger", "aria-label": `Revoke ${key.name || key.prefix}`, onclick: guarded(async () => {
                  if (!confirm(`Revoke ${key.name || key.prefix}? Programs using it stop working at once.`)) return;
                  await api(`/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
                  announce(`Key ${key.prefix} revoked`);
                  await render();
                }) }, "Revoke"),
          ),
        ),
      ),
    );
  };
  await render();
  onSubmit($("#key-form"), async (form) => {
    const created = await api("/keys", { method: "POST", json: { name: String(form.get("name")).trim() } });
    $("#key-form").reset();
    $("#new-key").hidden = false;
    $("#new-key-value").value = created.key;
    $("#new-key-value").focus();
    $("#new-key-value").select();
    announce("Key created. Copy it now: it is shown only once.");
    await render();
  });
  $("#copy-key").addEventListener("click", (event) => copy($("#new-key-value").value, event.currentTarget));
}

// ---- Usage -----------------------------------------------------------------------------------

async function usagePage() {
  const usage = await api("/usage?days=30");
  const limits = usage.limits || {};
  const facts = [
    ["Processing today", dailyQuotaFact(usage.daily_quota)],
    ["Storage in use", formatBytes(usage.storage_bytes)],
    ["Running tasks", `${usage.running_tasks} of ${limits.max_running_tasks ?? "?"}`],
    ["Waiting tasks", String(usage.waiting_tasks)],
    ["Rate limit", limits.rate_limit ? `${limits.rate_limit.requests} requests per ${limits.rate_limit.period_seconds} s` : "—"],
    ["Largest upload", limits.max_upload_bytes ? formatBytes(limits.max_upload_bytes) : "—"],
    ["Files kept for", limits.file_ttl_seconds ? formatDuration(limits.file_ttl_seconds) : "—"],
  ];
  $("#usage-facts").replaceChildren(...facts.flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, value)]));
  barChart($("#tasks-chart"), usage.days, "tasks", "Tasks", (value) => String(value), "tasks");
  barChart($("#seconds-chart"), usage.days, "seconds", "Seconds", (value) => `${Math.round(value * 10) / 10}`, "seconds");
}

/** The daily processing quota that POST /v1/tasks enforces (429 QUOTA_EXCEEDED), counted as it counts it. */
function dailyQuotaFact(quota) {
  if (!quota) return "—";
  const seconds = (value) => (value < 60 ? `${Math.round(value * 10) / 10} s` : formatDuration(value));
  const used = quota.limit_seconds - quota.remaining_seconds;
  const resets = new Date(quota.resets_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return el(
    "span",
    { id: "daily-quota" },
    `${seconds(used)} of ${seconds(quota.limit_seconds)} used`,
    el("meter", { min: 0, max: quota.limit_seconds, value: used, "aria-label": "Daily processing used" }),
    el(
      "span",
      { class: "hint" },
      `${seconds(quota.processed_seconds)} ran, ${seconds(quota.reserved_seconds)} held by unfinished tasks (each holds its time limit until it ends). `,
      `Once it is used up, new tasks are refused (429 QUOTA_EXCEEDED) until 00:00 UTC (${resets} here).`,
    ),
  );
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/** A bar chart as inline SVG, with the same numbers in a table for screen readers. */
function barChart(figure, days, field, label, format, unit) {
  const width = 600;
  const height = 190;
  const left = 36;
  const top = 22;
  const bottom = 20;
  const max = Math.max(1, ...days.map((day) => day[field]));
  const slot = (width - left) / days.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-hidden": "true" });
  chart.append(svg("text", { x: 0, y: 10, class: "unit" }, unit));
  for (const fraction of [0, 0.5, 1]) {
    const y = height - bottom - fraction * (height - bottom - top);
    chart.append(svg("line", { x1: left, x2: width, y1: y, y2: y }), svg("text", { x: 0, y: y + 4 }, format(max * fraction)));
  }
  days.forEach((day, index) => {
    const barHeight = (day[field] / max) * (height - bottom - top);
    const x = left + index * slot + 1;
    chart.append(svg("rect", { class: "bar", x, y: height - bottom - barHeight, width: Math.max(1, slot - 2), height: barHeight }, svg("title", {}, `${day.date}: ${format(day[field])}`)));
    if (index % 5 === 0) chart.append(svg("text", { x, y: height - 5 }, day.date.slice(5)));
    if (index === days.length - 1) chart.append(svg("text", { x: width, y: height - 5, "text-anchor": "end" }, day.date.slice(5)));
  });
  // Tables ignore the clipping of .sr-only, so a wrapper hides it.
  const table = el(
    "table",
    {},
    el("caption", {}, `${label} per day`),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Date"), el("th", { scope: "col" }, label))),
    el("tbody", {}, ...days.map((day) => el("tr", {}, el("td", {}, day.date), el("td", {}, format(day[field]))))),
  );
  const total = days.reduce((sum, day) => sum + day[field], 0);
  figure.replaceChildren(chart, el("figcaption", {}, `${format(total)} in total over ${days.length} days.`), el("div", { class: "sr-only" }, table));
}

// ---- Webhooks ------------------------------------------------------------------------------

async function webhooksPage() {
  $("#rotate-secret").addEventListener("click", guarded(async () => {
    if (!confirm("Rotate the signing secret? A new secret replaces the current one, which keeps signing only for a while: update your receivers with the new one.")) return;
    const secret = await api("/v1/webhook-secret/rotate", { method: "POST" });
    $("#secret-box").hidden = false;
    $("#secret-value").value = secret.secret;
    $("#secret-note").textContent = secret.previous_valid_until ? `The previous secret also signs deliveries until ${new Date(secret.previous_valid_until).toLocaleString()}.` : "";
    $("#secret-value").focus();
    announce("New secret shown. Copy it now: it is shown only once.");
  }));
  $("#copy-secret").addEventListener("click", (event) => copy($("#secret-value").value, event.currentTarget));

  const { tasks } = await api("/v1/tasks?limit=20");
  const lists = await Promise.all(tasks.map(async (task) => ({ task, list: await api(`/v1/tasks/${encodeURIComponent(task.task_id)}/webhooks`) })));
  const rows = lists
    .filter(({ list }) => list.webhook_url)
    .flatMap(({ task, list }) =>
      (list.deliveries.length ? list.deliveries.slice(-3) : [null]).map((delivery) =>
        el(
          "tr",
          {},
          el("td", {}, el("a", { href: `/console/tasks/${encodeURIComponent(task.task_id)}`, class: "mono" }, task.task_id)),
          el("td", { class: "mono" }, list.webhook_url),
          el("td", {}, delivery ? String(delivery.attempt) : "—"),
          el("td", {}, delivery ? formatTime(delivery.attempted_at) : "not yet"),
          el("td", { class: delivery && !delivery.success ? "error" : "" }, delivery ? (delivery.status_code === null ? delivery.error || "no answer" : String(delivery.status_code)) : ""),
        ),
      ),
    );
  $("#recent-deliveries tbody").replaceChildren(...rows);
  $("#deliveries-empty").hidden = rows.length > 0;
  $("#recent-deliveries").parentElement.hidden = rows.length === 0;
}

// ---- Account -------------------------------------------------------------------------------

async function accountPage() {
  onSubmit($("#password-form"), async () => {
    await api("/account/password", { method: "POST", json: { current_password: $("#current-password").value, new_password: $("#new-password").value }, expect401: true }).catch((error) => {
      throw error.status === 401 ? new Error("The current password is wrong.") : error;
    });
    csrfToken = (await api("/session")).csrf_token;
    $("#password-form").reset();
    flash("Password changed. Your other sessions are signed out.", "info");
  });
  onSubmit($("#delete-form"), async () => {
    if (!confirm("Delete your account and everything in it?")) return;
    await api("/account", { method: "DELETE", json: { password: $("#delete-password").value }, expect401: true }).catch((error) => {
      throw error.status === 401 ? new Error("The password is wrong.") : error;
    });
    location.assign("/console/signup");
  });
}

// ---- On every signed-in page: sign-out, copy buttons, tables as cards on narrow screens ----

function signedInChrome() {
  $("#sign-out").addEventListener("click", guarded(async () => {
    await api("/auth/signout", { method: "POST" });
    location.assign("/console/signin?reason=signedout");
  }));
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", () => copyText(document.getElementById(button.dataset.copy).textContent, button));
  }
  for (const table of document.querySelectorAll(".scroll > table")) labelCells(table);
}

/** Copies any text (copy() copies the value of an input next to its button). */
async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const field = el("textarea", { class: "sr-only", readonly: true });
    field.value = text;
    button.after(field);
    field.select();
    document.execCommand("copy");
    field.remove();
  }
  const label = button.textContent;
  button.textContent = "Copied";
  announce("Copied to the clipboard");
  setTimeout(() => (button.textContent = label), 2000);
}

/**
 * On a narrow screen each row is a card whose cells carry their column's name (CSS shows
 * `data-label`). Rows come and go as pages refresh them, so every row added is labelled from
 * the header; a cell that already has a label keeps it, and a column whose header is only for
 * screen readers (actions) gets none.
 */
function labelCells(table) {
  const names = [...table.querySelectorAll("thead th")].map((th) => (th.querySelector(".sr-only") ? "" : th.textContent.trim()));
  const label = () => {
    for (const row of table.tBodies[0]?.rows ?? []) {
      [...row.cells].forEach((cell, index) => {
        if (!cell.hasAttribute("data-label")) cell.setAttribute("data-label", names[index] ?? "");
      });
    }
  };
  label();
  new MutationObserver(label).observe(table, { childList: true, subtree: true });
}

// ---- Start -----------------------------------------------------------------------------------

const SIGNED_OUT = { signin: signinPage, signup: signupPage, verify: verifyPage, forgot: forgotPage, reset: resetPage };
const SIGNED_IN = { tasks: tasksPage, task: taskPage, composer: composerPage, files: filesPage, keys: keysPage, usage: usagePage, webhooks: webhooksPage, account: accountPage };

async function start() {
  const page = document.body.dataset.page;
  try {
    if (SIGNED_OUT[page]) await SIGNED_OUT[page]();
    else {
      const session = await api("/session");
      csrfToken = session.csrf_token;
      $("#who").textContent = session.email;
      signedInChrome();
      await SIGNED_IN[page]();
    }
    document.body.dataset.ready = "true";
  } catch (error) {
    if (error.status !== 401) flash(error.message);
  }
}

start();
