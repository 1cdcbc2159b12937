-- How many times a task was started again after its transcoder was lost (shown in the API).
ALTER TABLE tasks ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
-- The cron's reconciler looks at every task that has not ended.
CREATE INDEX tasks_unfinished ON tasks(created_at) WHERE status IN ('pending', 'running');
