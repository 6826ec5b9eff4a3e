# Writes build_info.hpp with the version and the current git commit. Runs at every build, and
# rewrites the file only when the commit changed, so summary.json always names the real commit.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR COMMIT STREQUAL "")
  # Built from sources without their .git (the container image's build stage): the commit the
  # builder passes in REBALANCE_SIM_COMMIT (`make image` does), else unknown.
  if(DEFINED ENV{REBALANCE_SIM_COMMIT} AND NOT "$ENV{REBALANCE_SIM_COMMIT}" STREQUAL "")
    set(COMMIT "$ENV{REBALANCE_SIM_COMMIT}")
  else()
    set(COMMIT "unknown")
  endif()
endif()
set(PROJECT_VERSION ${VERSION})
set(REBALANCE_SIM_COMMIT ${COMMIT})
configure_file(${SRC}/tools/build_info.hpp.in ${OUT} @ONLY)
