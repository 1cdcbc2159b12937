-- The day's processed seconds of one user (the daily quota at submission, GET /v1/me's
-- remaining_credits, the console's usage) read only that user's tasks finished since the day
-- began: without this index the query walks every task the user ever had (docs/scale.md).
CREATE INDEX tasks_user_finished ON tasks(user_id, finished_at) WHERE started_at IS NOT NULL;
