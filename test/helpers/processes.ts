import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface LivingProcess {
  pid: number;
  args: string;
}

/** Those of `pids` still running, with their command lines (a zombie has ended: only its parent has not collected it yet). */
export async function living(pids: readonly number[]): Promise<LivingProcess[]> {
  const wanted = new Set(pids);
  const { stdout } = await run("ps", ["-e", "-o", "pid=,stat=,args="], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim().split("\n").flatMap((line) => {
    const [pid, stat, ...args] = line.trim().split(/\s+/);
    return wanted.has(Number(pid)) && !stat!.startsWith("Z") ? [{ pid: Number(pid), args: args.join(" ") }] : [];
  });
}
