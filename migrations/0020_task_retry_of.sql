-- The finished task a task runs again (POST /v1/tasks/{id}/retry), shown as `retry_of` by
-- GET /v1/tasks/{id}. NULL for a task submitted any other way.
ALTER TABLE tasks ADD COLUMN retry_of TEXT;
