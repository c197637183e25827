-- A table's chat, archived with the table (docs/archive.md): each message as the table's
-- chat stream held it (services/gateway/chat.py): its id, Redis's <ms>-<n> (kept as its
-- two numbers, so messages sort by time), and the stored message (JSON) byte for byte.
-- Written in the table's transaction; a rerun after a crash adds what was not there yet
-- (a message id is never reused), so it never writes a message twice.
CREATE TABLE archive_chat (
    namespace text   NOT NULL,
    table_id  text   NOT NULL,
    ms        bigint NOT NULL CHECK (ms >= 0),
    seq       bigint NOT NULL CHECK (seq >= 0),
    data      bytea  NOT NULL,
    PRIMARY KEY (namespace, table_id, ms, seq),
    FOREIGN KEY (namespace, table_id) REFERENCES archive_tables (namespace, table_id)
        ON DELETE CASCADE
);
