# Writes OUTPUT, a header defining WAFER_COMMIT as the source tree's commit
# (or "unknown" outside a git checkout). Run at every build; the header is
# rewritten only when the commit changed, so only then does what includes
# it rebuild.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE result)
if(NOT result EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(content "#define WAFER_COMMIT \"${commit}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
