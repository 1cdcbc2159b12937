/** Numbers, durations and statuses as the console words them; pure, no DOM. */
import type { TaskView } from "./types";

/** Binary units, largest first. */
const BYTE_UNITS = [["TiB", 1024 ** 4], ["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const;

/** "512 B", "1.5 MiB", "12 GiB": one decimal below 10, none above. */
export function formatBytes(bytes: number): string {
  const unit = BYTE_UNITS.find(([, size]) => bytes >= size);
  if (!unit) return `${bytes} B`;
  const value = bytes / unit[1];
  return `${value.toFixed(value < 10 ? 1 : 0).replace(/\.0$/, "")} ${unit[0]}`;
}

export function formatDuration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  if (m > 0) return s > 0 ? `${m} min ${s} s` : `${m} min`;
  return `${s} s`;
}

/** Time left until `expiresAt`, or "expired". */
export function countdown(expiresAt: string): string {
  const left = (new Date(expiresAt).getTime() - Date.now()) / 1000;
  return left <= 0 ? "expired" : formatDuration(left);
}

/** A canceled task keeps FFHub's status "failed"; the console says what happened (canceled_at, error_code CANCELED). */
export function shownStatus(task: Pick<TaskView, "status" | "canceled_at" | "error_code">): string {
  return task.canceled_at || (task.status === "failed" && task.error_code === "CANCELED") ? "canceled" : task.status;
}

export function isUnfinished(task: Pick<TaskView, "status">): boolean {
  return task.status === "pending" || task.status === "running";
}
