-- The destination a task named (POST /v1/tasks `destination`, or its preset's), as JSON
-- {"id": "dst_…", "mode": "copy" | "only"}: the id it resolved to when submitted, so a rename
-- does not redirect it. NULL for a task without one. A retry delivers to the same destination.
ALTER TABLE tasks ADD COLUMN destination TEXT;
