# Renders IN with ljpsvg (extra ARGS) and compares the bytes with GOLDEN.
# With UPDATE=1 the golden file is rewritten instead.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${LJPSVG} ${args} ${IN} OUTPUT_FILE ${OUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ljpsvg exited with ${rc}")
endif()
if(UPDATE)
  configure_file(${OUT} ${GOLDEN} COPYONLY)
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${GOLDEN}
                RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${OUT} differs from ${GOLDEN} (UPDATE=1 to accept)")
endif()
