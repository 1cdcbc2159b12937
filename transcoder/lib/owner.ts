import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * This process as the owner of the directories it makes in WORK_ROOT: its pid and its start
 * time (clock ticks since boot, from /proc/<pid>/stat), so a reused pid is never taken for it.
 */
export function ownerTag(): string {
  return THIS_PROCESS;
}

const THIS_PROCESS = `${process.pid}.${startTimeOf(readFileSync("/proc/self/stat", "utf8"))}`;

function startTimeOf(stat: string): string | undefined {
  // The command name (field 2) may hold spaces and parentheses; the fields after it are plain.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

/** True while the process that made a tag `<pid>.<start time>` still runs. */
export async function ownerAlive(pid: string, startTime: string): Promise<boolean> {
  // No such process: its owner has exited.
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat !== undefined && startTimeOf(stat) === startTime;
}
