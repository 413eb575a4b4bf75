-- test_counter.sql: the schema step of the counter-list test build (tests/CMakeLists.txt,
-- decbench_testcounter): the column of the extra counter that DECBENCH_TEST_COUNTER adds to
-- the list in stats/stats.h, and two tables (below). results/db/embed_schema.cmake numbers it
-- after schema.sql's last step.
ALTER TABLE samples ADD COLUMN test_emits INTEGER NOT NULL DEFAULT 0;
-- Two tables only this build has, one hanging off a sample and one off a run
-- (tests/cli_shard.sh): `merge` must carry their rows with their sample or run without knowing
-- their names, as it must a table a future schema step adds.
CREATE TABLE test_sample_notes (
    sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    note      TEXT NOT NULL
);
CREATE TABLE test_run_notes (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    note   TEXT NOT NULL
);
