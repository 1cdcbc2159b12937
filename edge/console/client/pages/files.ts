/** The Files page: the user's files with their time left, tus uploads with progress, deletion. */
import { ApiError, api } from "../api";
import { control, copy, guarded, onSubmit } from "../actions";
import { $, announce, el } from "../dom";
import { fileIdentity, fileName, pageFiles } from "../files";
import { countdown, formatBytes } from "../format";
import type { UploadRecord } from "../types";
import { tusUpload } from "../upload";

export function filesPage(): void {
  let files = pageFiles();
  const render = () => {
    $("#file-empty").hidden = files.length > 0;
    $("#file-table").parentElement!.hidden = files.length === 0;
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
            el("button", { type: "button", class: "secondary", "aria-label": `Copy URL of ${fileName(file)}`, onclick: (event) => copy(file.url, control(event)) }, "Copy URL"),
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
    for (const cell of document.querySelectorAll<HTMLElement>(".countdown")) cell.textContent = countdown(cell.dataset.expires!);
  }, 1000);

  onSubmit($<HTMLFormElement>("#upload-form"), async (form) => {
    const file = form.get("file");
    if (!(file instanceof File) || file.size === 0) throw new Error("Choose a non-empty file first.");
    const bar = $<HTMLProgressElement>("#upload-progress");
    const status = $("#upload-status");
    bar.hidden = false;
    bar.value = 0;
    status.textContent = `Uploading ${file.name}…`;
    status.classList.remove("error");
    let record: UploadRecord;
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
    $<HTMLFormElement>("#upload-form").reset();
    files = [{ ...record, filename: file.name, created_at: new Date().toISOString() }, ...files];
    render();
  });
}

/** Why an upload was refused, in the user's terms rather than the tus protocol's (Upload-Length, offsets). */
function uploadRefusal(error: unknown, file: File): string {
  const problem = error instanceof ApiError ? error.problem : {};
  const status = error instanceof ApiError ? error.status : 0;
  if (problem.code === "PAYLOAD_TOO_LARGE" && problem.limit) return `This file is ${formatBytes(file.size)}; the limit is ${formatBytes(problem.limit)}.`;
  if (problem.code === "EMPTY_FILE") return "The file is empty.";
  if (problem.code === "STORAGE_FULL" || problem.code === "STORAGE_UNAVAILABLE") return "Storage is not available right now; try again in a few minutes.";
  if (problem.code === "RATE_LIMITED") return "Too many requests at once; wait a minute and try again.";
  if (status === 401) return "Your session has ended; sign in again, then upload.";
  if (!status) return "The connection broke off; check the network and upload it again.";
  return error instanceof Error ? error.message : String(error);
}
