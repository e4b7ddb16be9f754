# Fails when a test of the build in DIR has none of the kind labels unit,
# golden, cli, capture, fuzz (ctest -N lists what -LE does not exclude).
#   cmake -DCTEST=ctest -DDIR=BUILD_DIR -P labels.cmake
execute_process(COMMAND ${CTEST} -N -LE "^(unit|golden|cli|capture|fuzz)$"
                WORKING_DIRECTORY ${DIR}
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest -N failed (${rc}):\n${out}")
endif()
string(REGEX MATCHALL "Test +#[0-9]+: [^\n]+" unlabeled "${out}")
if(unlabeled)
  string(REPLACE ";" "\n" unlabeled "${unlabeled}")
  message(FATAL_ERROR "tests without a kind label:\n${unlabeled}")
endif()
string(REGEX MATCH "Total Tests: [0-9]+" total "${out}")
if(NOT total STREQUAL "Total Tests: 0")
  message(FATAL_ERROR "could not read ctest's list:\n${out}")
endif()
message(STATUS "every test has a kind label")
