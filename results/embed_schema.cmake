# embed_schema.cmake: compiles results/schema.sql into the binary, so the .sql file stays the
# single source of the schema. It becomes a byte array (hex, so no quoting or line-length
# limits of string literals apply) in <build>/generated/results/schema_sql.h, which only
# results/db_schema.c includes. Editing schema.sql re-runs the configure step.
set(DECBENCH_SCHEMA_SRC ${CMAKE_SOURCE_DIR}/results/schema.sql)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${DECBENCH_SCHEMA_SRC})
file(READ ${DECBENCH_SCHEMA_SRC} DECBENCH_SCHEMA_HEX HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," DECBENCH_SCHEMA_BYTES "${DECBENCH_SCHEMA_HEX}")
# 16 bytes per line keeps the generated file readable in a debugger.
string(REPEAT "0x..," 16 DECBENCH_SCHEMA_LINE)
string(REGEX REPLACE "(${DECBENCH_SCHEMA_LINE})" "\\1\n    " DECBENCH_SCHEMA_BYTES
  "${DECBENCH_SCHEMA_BYTES}")
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/results/schema_sql.h CONTENT
"/* Generated from results/schema.sql by results/embed_schema.cmake: do not edit. */
static const char db_schema_sql_text[] = {
    @DECBENCH_SCHEMA_BYTES@ 0x00};
" @ONLY)
target_include_directories(decbench_core PRIVATE ${CMAKE_BINARY_DIR}/generated)
