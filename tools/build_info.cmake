# Writes build_info.hpp with the version and the current git commit. Runs at every build, and
# rewrites the file only when the commit changed, so summary.json always names the real commit.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR COMMIT STREQUAL "")
  set(COMMIT "unknown")
endif()
set(PROJECT_VERSION ${VERSION})
set(REBALANCE_SIM_COMMIT ${COMMIT})
configure_file(${SRC}/tools/build_info.hpp.in ${OUT} @ONLY)
