-- When each event was appended (docs/store.md, "The stored entry": the Redis server's
-- clock in ms, kept with each event since it was added). NULL for events stored before.
ALTER TABLE archive_events ADD COLUMN appended_ms bigint;
