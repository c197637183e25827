-- The archive of closed tables (docs/archive.md). One row per table, one per hand, one
-- per event: the event bytes and hashes exactly as the Redis stream stored them.
-- A table is written in one transaction; the deferred constraint triggers below refuse a
-- commit whose events do not make the table's whole chain, so no partial table can exist.

CREATE TABLE archive_tables (
    namespace   text        NOT NULL CHECK (namespace ~ '^[A-Za-z0-9_.-]{1,64}$'),
    table_id    text        NOT NULL CHECK (table_id ~ '^[A-Za-z0-9_-]{1,64}$'),
    variant     text        NOT NULL,
    name        text        NOT NULL,
    created_at  timestamptz,             -- the first append, when Redis still knew it
    closed_at   timestamptz NOT NULL,    -- the append of table_closed (or when first seen closed)
    archived_at timestamptz NOT NULL DEFAULT now(),
    version     integer     NOT NULL CHECK (version >= 1),
    head_hash   text        NOT NULL CHECK (head_hash ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (namespace, table_id)
);

CREATE TABLE archive_events (
    namespace  text    NOT NULL,
    table_id   text    NOT NULL,
    version    integer NOT NULL CHECK (version >= 1),
    command_id text    NOT NULL,
    data       bytea   NOT NULL,
    hash       text    NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
    prev_hash  text    NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (namespace, table_id, version),
    FOREIGN KEY (namespace, table_id) REFERENCES archive_tables (namespace, table_id)
        ON DELETE CASCADE
);

CREATE TABLE archive_hands (
    namespace text    NOT NULL,
    table_id  text    NOT NULL,
    hand_no   integer NOT NULL CHECK (hand_no >= 0),  -- counted from 0, as in the events
    status    text    NOT NULL,  -- the event that ended it (hand_scored, ...), or cut_short
    scores    jsonb,             -- each seat's score, for a scored hand
    PRIMARY KEY (namespace, table_id, hand_no),
    FOREIGN KEY (namespace, table_id) REFERENCES archive_tables (namespace, table_id)
        ON DELETE CASCADE
);

-- At commit: the table's events are versions 1..version, each continuing the one before
-- (event 1 from the 64-zero genesis), and the last one's hash is the table's head.
CREATE FUNCTION archive_check_complete(ns text, tid text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t archive_tables%ROWTYPE;
    n integer;
    top integer;
    broken integer;
    last_hash text;
BEGIN
    SELECT * INTO t FROM archive_tables WHERE namespace = ns AND table_id = tid;
    SELECT count(*), max(version) INTO n, top FROM archive_events
        WHERE namespace = ns AND table_id = tid;
    IF t.table_id IS NULL THEN
        IF n > 0 THEN
            RAISE EXCEPTION 'archive: events of table % without its table row', tid;
        END IF;
        RETURN;
    END IF;
    SELECT hash INTO last_hash FROM archive_events
        WHERE namespace = ns AND table_id = tid AND version = t.version;
    SELECT count(*) INTO broken FROM archive_events e
        LEFT JOIN archive_events p
            ON p.namespace = e.namespace AND p.table_id = e.table_id AND p.version = e.version - 1
        WHERE e.namespace = ns AND e.table_id = tid
          AND e.prev_hash IS DISTINCT FROM
              CASE WHEN e.version = 1 THEN repeat('0', 64) ELSE p.hash END;
    IF n <> t.version OR top <> t.version OR last_hash IS DISTINCT FROM t.head_hash OR broken > 0 THEN
        RAISE EXCEPTION 'archive: table % is incomplete (% events up to %, head %, % broken links)',
            tid, n, top, t.version, broken;
    END IF;
END $$;

CREATE FUNCTION archive_tables_complete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM archive_check_complete(NEW.namespace, NEW.table_id);
    RETURN NULL;
END $$;

-- Events written, removed or changed after (or without) their table row: the tables they
-- touch are checked at the end of the statement. The archive writes a table's events in
-- one COPY, so the check sees them all; a later insert, delete or re-hash that breaks a
-- committed table is refused.
CREATE FUNCTION archive_events_complete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT DISTINCT namespace, table_id FROM touched LOOP
        PERFORM archive_check_complete(r.namespace, r.table_id);
    END LOOP;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER archive_tables_complete
    AFTER INSERT OR UPDATE ON archive_tables
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION archive_tables_complete();

CREATE TRIGGER archive_events_inserted AFTER INSERT ON archive_events
    REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION archive_events_complete();

CREATE TRIGGER archive_events_deleted AFTER DELETE ON archive_events
    REFERENCING OLD TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION archive_events_complete();

CREATE TRIGGER archive_events_updated AFTER UPDATE ON archive_events
    REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION archive_events_complete();
