-- The durable record of each task. Live state (progress, heartbeats) lives in the task's
-- Durable Object, which is the only writer of status transitions.
CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  command TEXT NOT NULL,
  with_metadata INTEGER NOT NULL DEFAULT 0,
  webhook_url TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  progress INTEGER NOT NULL DEFAULT 0,
  outputs TEXT,
  error TEXT,
  error_code TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT
);
CREATE INDEX tasks_user_created ON tasks(user_id, created_at DESC);
CREATE INDEX tasks_user_status ON tasks(user_id, status, created_at DESC);
