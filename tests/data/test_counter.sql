-- test_counter.sql: the schema step of the counter-list test build (tests/CMakeLists.txt,
-- decbench_testcounter): the column of the extra counter that DECBENCH_TEST_COUNTER adds to
-- the list in stats/stats.h. results/embed_schema.cmake numbers it after schema.sql's last step.
ALTER TABLE samples ADD COLUMN test_emits INTEGER NOT NULL DEFAULT 0;
