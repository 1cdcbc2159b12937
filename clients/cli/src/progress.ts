import cliProgress from "cli-progress";
import type { RunProgress } from "../../sdk/src/index";
import { formatBytes, formatSeconds, note } from "./output";

export type ProgressMode = "bar" | "lines" | "silent";

/** A bar on a terminal (gh's rule: progress only on a TTY), plain lines in logs and pipes, nothing with --json. */
export function progressMode(options: { json?: boolean; quiet?: boolean }, stream: NodeJS.WriteStream = process.stderr): ProgressMode {
  if (options.json || options.quiet) return "silent";
  return stream.isTTY && process.env.TERM !== "dumb" ? "bar" : "lines";
}

const LINE_STEP_PERCENT = 10;

/** Turns the SDK's progress events into what the mode shows, on stderr. */
export class ProgressReporter {
  private bar: cliProgress.SingleBar | undefined;
  private barKey = "";
  private lastLinePercent = -1;
  private lastStatus = "";
  private uploadStart = 0;

  constructor(private readonly mode: ProgressMode) {}

  readonly onProgress = (event: RunProgress): void => {
    if (this.mode === "silent") return;
    if (event.phase === "upload") this.upload(event.file, event.loaded, event.total, event.method);
    else if (event.phase === "submitted") this.line(`Submitted ${event.task_id}`);
    else if (event.phase === "delivery") this.line(event.pending > 0 ? `${event.task_id}: completed; waiting for its deliveries to the destination (${event.pending} of ${event.total} pending)` : `${event.task_id}: deliveries ended`);
    else this.task(event.task_id, event.status, event.progress, event.eta_seconds);
  };

  /** A message between bars: the current bar is finished first so the two do not overwrite each other. */
  line(text: string): void {
    if (this.mode === "silent") return;
    this.stop();
    note(text);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
    this.barKey = "";
  }

  private upload(file: string, loaded: number, total: number, method: string): void {
    const key = `upload:${file}`;
    const first = key !== this.barKey;
    if (first) this.uploadStart = Date.now();
    const seconds = (Date.now() - this.uploadStart) / 1000;
    const rate = seconds > 0.5 ? loaded / seconds : 0;
    const eta = rate > 0 ? (total - loaded) / rate : NaN;
    const percent = total > 0 ? Math.floor((loaded / total) * 100) : 100;
    if (this.mode === "bar") {
      const detail = `${formatBytes(loaded)}/${formatBytes(total)}${rate > 0 ? `  ${formatBytes(rate)}/s  ETA ${formatSeconds(eta)}` : ""}`;
      this.show(key, `Uploading ${file} by ${method}`, percent, detail);
      return;
    }
    if (first) {
      this.barKey = key;
      this.lastLinePercent = 0;
      note(`Uploading ${file} by ${method} (${formatBytes(total)})`);
    }
    if (percent >= 100) {
      if (this.lastLinePercent < 100) note(`Uploaded ${file} (${formatBytes(total)} in ${formatSeconds(seconds)})`);
      this.lastLinePercent = 100;
    } else if (percent >= this.lastLinePercent + LINE_STEP_PERCENT) {
      note(`Uploading ${file}: ${percent}%${Number.isFinite(eta) ? `, ETA ${formatSeconds(eta)}` : ""}`);
      this.lastLinePercent = percent - (percent % LINE_STEP_PERCENT);
    }
  }

  private task(taskId: string, status: string, progress: number, etaSeconds: number | undefined): void {
    const eta = etaSeconds === undefined ? "" : `  ETA ${formatSeconds(etaSeconds)}`;
    if (this.mode === "bar") {
      if (status === "completed" || status === "failed") {
        this.show(`task:${taskId}`, taskId, status === "completed" ? 100 : progress, status);
        this.stop();
      } else this.show(`task:${taskId}`, taskId, progress, `${status}${eta}`);
      return;
    }
    const key = `task:${taskId}`;
    if (key !== this.barKey) {
      this.barKey = key;
      this.lastLinePercent = -LINE_STEP_PERCENT;
      this.lastStatus = "";
    }
    if (status !== this.lastStatus || progress >= this.lastLinePercent + LINE_STEP_PERCENT) {
      if (status === "completed") note(`${taskId}: completed`);
      else if (status !== "failed") note(`${taskId}: ${status} ${progress}%${eta}`);
      this.lastStatus = status;
      this.lastLinePercent = progress - (progress % LINE_STEP_PERCENT);
    }
  }

  private show(key: string, label: string, percent: number, detail: string): void {
    if (key !== this.barKey) {
      this.stop();
      this.barKey = key;
      this.bar = new cliProgress.SingleBar(
        { stream: process.stderr, format: "{label} [{bar}] {percentage}%  {detail}", barsize: 30, hideCursor: true, clearOnComplete: false, etaBuffer: 20, fps: 8 },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(100, 0, { label, detail });
    }
    this.bar!.update(Math.min(100, Math.max(0, Math.round(percent))), { label, detail });
  }
}
