import type { ErasableTasks } from "../accounts/erase";
import { taskStub } from "../lib/stubs";
import { cancelTask } from "./live-state";
import { deleteUserTasksStatement, listUserTaskStatuses } from "./repository";

/**
 * The user's tasks as erasing reaches them (accounts never import edge/tasks/). They are listed
 * when the cancel starts, once the account's keys and sessions are gone and no new request can
 * add one.
 */
export function tasksOfUser(env: Env, userId: string): ErasableTasks {
  let tasks: { id: string; status: string }[] = [];
  return {
    async cancelUnfinished() {
      tasks = await listUserTaskStatuses(env.DB, userId);
      for (const task of tasks) if (task.status === "pending" || task.status === "running") await cancelTask(env, task.id);
    },
    deleteRows: () => deleteUserTasksStatement(env.DB, userId),
    async destroyObjects() {
      for (const task of tasks) await taskStub(env, task.id).destroy();
    },
  };
}
