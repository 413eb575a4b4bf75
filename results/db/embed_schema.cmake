# embed_schema.cmake: compiles results/db/schema.sql into the binary, so the .sql file stays the
# single source of the schema. It becomes a byte array (hex, so no quoting or line-length
# limits of string literals apply) in <dir>/results/db/schema_sql.h, which only
# results/db/db_schema.c includes. Editing schema.sql re-runs the configure step.
#
# decbench_embed_schema(DIR [EXTRA_SQL]): writes DIR/results/db/schema_sql.h. EXTRA_SQL (tests
# only: the counter-list test build, tests/CMakeLists.txt) is appended as one more step, its
# "-- @version N" line numbered after schema.sql's last step.
set(DECBENCH_SCHEMA_SRC ${CMAKE_SOURCE_DIR}/results/db/schema.sql)
function(decbench_embed_schema dir)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${DECBENCH_SCHEMA_SRC})
  file(READ ${DECBENCH_SCHEMA_SRC} text)
  if(ARGC GREATER 1)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARGV1})
    string(REGEX MATCHALL "\n-- @version [0-9]+" steps "\n${text}")
    list(GET steps -1 last)
    string(REGEX REPLACE ".*-- @version " "" last "${last}")
    math(EXPR next "${last} + 1")
    file(READ ${ARGV1} extra)
    string(APPEND text "\n-- @version ${next}\n${extra}")
  endif()
  string(HEX "${text}" hex)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # 16 bytes per line keeps the generated file readable in a debugger.
  string(REPEAT "0x..," 16 line)
  string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
  file(CONFIGURE OUTPUT ${dir}/results/db/schema_sql.h CONTENT
"/* Generated from results/db/schema.sql by results/db/embed_schema.cmake: do not edit. */
static const char db_schema_sql_text[] = {
    ${bytes} 0x00};
")
endfunction()
decbench_embed_schema(${CMAKE_BINARY_DIR}/generated) # each core library includes <build>/generated
