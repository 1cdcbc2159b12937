-- Webhook endpoints a user registers once, instead of passing a URL with every task, with
-- their own signing secrets and delivery log. Everything hangs off the endpoint, and the
-- endpoint off its user: deleting either deletes the rest (account erasure included).

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  -- A JSON array of event types, e.g. ["task.completed","task.failed"].
  events TEXT NOT NULL,
  description TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_user ON webhook_endpoints(user_id, created_at);

-- As webhook_secrets, per endpoint: one current (expires_at NULL) plus those retired by a
-- rotation, valid until expires_at; encrypted (AES-GCM, key derived from SIGNING_SECRET).
CREATE TABLE webhook_endpoint_secrets (
  id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  ciphertext TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT
);
CREATE UNIQUE INDEX webhook_endpoint_secrets_current ON webhook_endpoint_secrets(endpoint_id) WHERE expires_at IS NULL;

-- Each event handed to an endpoint, with the bytes it sends (a redelivery sends them again,
-- even once the task or file is gone), and each attempt at it.
CREATE TABLE webhook_endpoint_events (
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  task_id TEXT,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX webhook_endpoint_events_recent ON webhook_endpoint_events(endpoint_id, created_at DESC);
CREATE INDEX webhook_endpoint_events_task ON webhook_endpoint_events(task_id) WHERE task_id IS NOT NULL;

CREATE TABLE webhook_endpoint_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  redelivery INTEGER NOT NULL DEFAULT 0,
  attempted_at TEXT NOT NULL,
  status_code INTEGER,
  latency_ms INTEGER,
  success INTEGER NOT NULL,
  error TEXT,
  FOREIGN KEY (endpoint_id, event_id) REFERENCES webhook_endpoint_events(endpoint_id, event_id) ON DELETE CASCADE
);
CREATE INDEX webhook_endpoint_attempts_event ON webhook_endpoint_attempts(endpoint_id, event_id, attempt);
