-- Each task's own time limit, reserved against its owner's DAILY_TASK_SECONDS when it was
-- accepted: the daily quota counts unfinished tasks at this bound (NULL: TASK_TIMEOUT_SECONDS).
ALTER TABLE tasks ADD COLUMN time_limit_seconds INTEGER;
