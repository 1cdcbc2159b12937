import { readFile, readdir } from "node:fs/promises";

interface ProcessInfo {
  parent: number;
  name: string;
}

/**
 * The workerd processes this bench started. wrangler runs the Worker and its dev proxy in
 * separate workerd processes and a request's bytes pass through both, so both are counted.
 */
export async function workerdPids(): Promise<number[]> {
  const table = new Map<number, ProcessInfo>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, "utf8").catch(() => "");
    if (status) table.set(Number(entry), { parent: Number(statusField(status, "PPid")), name: statusField(status, "Name") });
  }
  return [...table].filter(([pid, info]) => info.name === "workerd" && descendsFrom(pid, process.pid, table)).map(([pid]) => pid);
}

function statusField(status: string, name: string): string {
  return new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1]?.trim() ?? "";
}

function descendsFrom(pid: number, ancestor: number, table: Map<number, ProcessInfo>): boolean {
  for (let current = table.get(pid)?.parent; current !== undefined && current > 1; current = table.get(current)?.parent) {
    if (current === ancestor) return true;
  }
  return false;
}

/** Summed VmRSS of `pids`, in bytes. */
export async function rssBytes(pids: number[]): Promise<number> {
  const sizes = await Promise.all(pids.map(async (pid) => {
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    return Number.parseInt(statusField(status, "VmRSS") || "0", 10) * 1024;
  }));
  return sizes.reduce((sum, size) => sum + size, 0);
}

/**
 * Samples the RSS of this bench's workerd processes every `intervalMs` while `work` runs: the
 * level before and the peak. The processes are looked up each time: wrangler starts the
 * Worker's own workerd lazily and restarts it, so pids seen at start-up can be stale.
 */
export async function measureRss<T>(work: () => Promise<T>, intervalMs = 20): Promise<{ result: T; beforeBytes: number; peakBytes: number; pids: number[] }> {
  const pids = await workerdPids();
  const beforeBytes = await rssBytes(pids);
  let peakBytes = beforeBytes;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peakBytes = Math.max(peakBytes, await rssBytes(pids));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  let result: T;
  try {
    result = await work();
  } finally {
    running = false;
    await sampler;
  }
  peakBytes = Math.max(peakBytes, await rssBytes(pids));
  return { result, beforeBytes, peakBytes, pids };
}
