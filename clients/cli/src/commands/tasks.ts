import { type Command, InvalidArgumentError } from "commander";
import type { Task, TaskStatus } from "../../../sdk/src/index";
import { connect, type GlobalOptions } from "../client";
import { failedTask, withInterrupt } from "../interrupt";
import { formatSeconds, note, printJson, printLine, printTable, truncate } from "../output";
import { ProgressReporter, progressMode } from "../progress";

const STATUSES = ["pending", "running", "completed", "failed"];

export function integer(min: number, max: number) {
  return (value: string): number => {
    if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return Number(value);
  };
}

export function registerTasks(program: Command): void {
  const tasks = program.command("tasks").description("list, inspect, follow, retry and cancel your tasks");
  const global = () => program.opts<GlobalOptions>();

  tasks
    .command("list")
    .description("your tasks, newest first")
    .option("--status <status>", `only tasks in this state (${STATUSES.join(", ")})`, (value: string) => {
      if (!STATUSES.includes(value)) throw new InvalidArgumentError(`must be one of ${STATUSES.join(", ")}`);
      return value;
    })
    .option("--limit <n>", "how many (1-100)", integer(1, 100), 20)
    .option("--offset <n>", "skip this many", integer(0, 1_000_000_000))
    .option("--json", "print {total, tasks} as JSON")
    .action(async (options: { status?: TaskStatus; limit: number; offset?: number; json?: boolean }) => {
      const { ff } = await connect(global());
      const page = await ff.tasks.list({ status: options.status, limit: options.limit, offset: options.offset });
      if (options.json) return printJson(page);
      if (page.tasks.length === 0) return note("No tasks.");
      printTable(
        ["ID", "STATUS", "PROGRESS", "CREATED", "COMMAND"],
        page.tasks.map((task) => [task.task_id, task.status, `${task.progress}%`, task.created_at.replace("T", " ").slice(0, 19), truncate(task.command, 60)]),
      );
      if (page.total > page.tasks.length + (options.offset ?? 0)) note(`${page.tasks.length} of ${page.total}; --offset ${(options.offset ?? 0) + page.tasks.length} for more`);
    });

  tasks
    .command("get")
    .argument("<task-id>")
    .description("one task: status, progress, outputs, error")
    .option("--json", "print the task as JSON")
    .action(async (id: string, options: { json?: boolean }) => {
      const { ff } = await connect(global());
      const task = await ff.tasks.get(id);
      if (options.json) return printJson(task);
      printTask(task);
    });

  tasks
    .command("cancel")
    .argument("<task-id>")
    .description("stop a pending or running task (it ends failed with CANCELED)")
    .option("--json", "print the task as JSON")
    .action(async (id: string, options: { json?: boolean }) => {
      const { ff } = await connect(global());
      const task = await ff.tasks.cancel(id);
      if (options.json) return printJson(task);
      note(`Canceled ${task.task_id}.`);
    });

  tasks
    .command("retry")
    .argument("<task-id>")
    .description("run a finished task again as a new task (same command, preset or steps); prints the new task's id")
    .option("--json", "print {task_id, status, created_at, retry_of} as JSON")
    .action(async (id: string, options: { json?: boolean }) => {
      const { ff } = await connect(global());
      const task = await ff.tasks.retry(id);
      if (options.json) return printJson(task);
      printLine(task.task_id);
      note(`Retrying ${id} as ${task.task_id}; follow it with: ffedge tasks watch ${task.task_id}`);
    });

  tasks
    .command("logs")
    .argument("<task-id>")
    .description("ffmpeg's output (stderr) of a task")
    .action(async (id: string) => {
      const { ff } = await connect(global());
      const log = await ff.tasks.logs(id);
      process.stdout.write(log.endsWith("\n") || log === "" ? log : `${log}\n`);
    });

  tasks
    .command("watch")
    .argument("<task-id>")
    .description("follow a task until it ends; exits 1 if it fails")
    .option("--json", "print only the final task as JSON")
    .action(async (id: string, options: { json?: boolean }) => {
      const { ff } = await connect(global());
      const reporter = new ProgressReporter(progressMode(options));
      const task = await withInterrupt(reporter, async (signal) =>
        ff.tasks.wait(id, {
          signal,
          onProgress: (event) => reporter.onProgress({ phase: "task", task_id: id, status: event.status, progress: event.progress, ...(event.eta_seconds === undefined ? {} : { eta_seconds: event.eta_seconds }) }),
        }),
        () => `ffedge: Interrupted: stopped watching ${id}; the task goes on (ffedge tasks cancel ${id} stops it)`,
      );
      if (options.json) printJson(task);
      else if (task.status === "completed") printTask(task);
      if (task.status === "failed") throw failedTask(task);
    });
}

export function printTask(task: Task): void {
  const eta = task.eta_seconds === undefined ? "" : `, ETA ${formatSeconds(task.eta_seconds)}`;
  printLine(`${task.task_id}  ${task.status}  ${task.progress}%${eta}`);
  printLine(`command   ${task.command}`);
  printLine(`created   ${task.created_at}${task.finished_at ? `, finished ${task.finished_at} (${task.elapsed ?? "?"} s running)` : ""}`);
  for (const step of task.steps ?? []) printLine(`step ${String(step.index).padEnd(5)}${step.status}  ${step.progress}%  ${step.command}`);
  if (task.error) printLine(`error     ${task.error_code ?? ""} ${task.error.replace(/\n/g, "\n          ")}`);
  for (const output of task.outputs ?? []) {
    const delivery = output.destination ? `  → ${output.destination.status} ${output.destination.url ?? output.destination.key}${output.destination.error_code ? ` (${output.destination.error_code})` : ""}` : "";
    printLine(`output    ${output.filename}  ${output.size} B  ${output.url}${delivery}`);
  }
}
