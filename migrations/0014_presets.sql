-- Saved command templates with typed parameters (docs/presets.md). The built-in presets live in
-- code (edge/presets/builtins.ts), not here. A user's presets go with the user: ON DELETE CASCADE.
CREATE TABLE presets (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  command TEXT NOT NULL,
  -- The JSON Schema object of the parameters, as saved.
  parameters TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX presets_user_name ON presets(user_id, name);
