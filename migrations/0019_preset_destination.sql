-- The destination a preset names, as JSON {"id": "dst_…", "mode": "copy" | "only"}: a task from
-- the preset delivers there unless the request names its own. NULL: none. A destination that a
-- preset names cannot be deleted (DESTINATION_IN_USE) until the preset no longer names it.
ALTER TABLE presets ADD COLUMN destination TEXT;
