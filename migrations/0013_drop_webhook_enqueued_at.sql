-- Each task's end event goes to its receiver from the task's own outbox, and the cron sweep
-- finds ends without a delivery attempt; nothing writes webhook_enqueued_at. SQLite refuses to
-- drop a column an index names, so its index goes first and comes back without the column.
DROP INDEX tasks_webhook_unsent;
ALTER TABLE tasks DROP COLUMN webhook_enqueued_at;
CREATE INDEX tasks_webhook_finished ON tasks(finished_at) WHERE webhook_url IS NOT NULL;
