-- Which hash each event carries (docs/store.md, "The hash chain"): 1, sha256(prev || data),
-- for events stored before the command id was hashed; 2, sha256(prev || command_id ||
-- "\n" || data), for every event appended since. Rows archived before this column
-- existed were all version 1.
ALTER TABLE archive_events
    ADD COLUMN hash_version smallint NOT NULL DEFAULT 1 CHECK (hash_version IN (1, 2));
