-- Webhook signing secrets and the log of every delivery attempt.

-- Standard Webhooks secrets, one current per user (expires_at NULL) plus those retired by a
-- rotation, which stay valid until expires_at. The secret itself is stored encrypted
-- (AES-GCM under a key derived from SIGNING_SECRET); it is shown once, by the rotate route.
CREATE TABLE webhook_secrets (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  ciphertext TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT
);
CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets(user_id) WHERE expires_at IS NULL;
CREATE INDEX webhook_secrets_user ON webhook_secrets(user_id, created_at DESC);

-- One row per attempt to deliver a task's event, including refused ones (status_code NULL).
-- Deleting a task deletes its log.
CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id),
  attempt INTEGER NOT NULL,
  redelivery INTEGER NOT NULL DEFAULT 0,
  url TEXT NOT NULL,
  attempted_at TEXT NOT NULL,
  status_code INTEGER,
  latency_ms INTEGER,
  success INTEGER NOT NULL,
  error TEXT
);
CREATE INDEX webhook_deliveries_task ON webhook_deliveries(task_id, attempt);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(webhook_id, attempt);
