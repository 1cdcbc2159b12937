-- A chained task's steps (POST /v1/tasks with `steps`), as JSON: [{"command", "publish"}, ...].
-- NULL for a task of one command. `command` then holds the steps' commands, one a line, so
-- every reader of `command` (lists, the console's summaries, search) sees ffmpeg commands.
ALTER TABLE tasks ADD COLUMN steps TEXT;
