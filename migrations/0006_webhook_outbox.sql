-- When a task's webhook event was queued. A finished task with a webhook and no value here
-- was never queued (its Durable Object stopped between writing the end and queueing): the
-- cron sweep queues it, so no first delivery is lost.
ALTER TABLE tasks ADD COLUMN webhook_enqueued_at TEXT;
CREATE INDEX tasks_webhook_unsent ON tasks(finished_at) WHERE webhook_url IS NOT NULL AND webhook_enqueued_at IS NULL;
