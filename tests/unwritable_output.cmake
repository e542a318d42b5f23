# A tool an environment variable turns on (PROFILE, VIZ) pointed at a place that cannot be written: the program
# still succeeds and prints what it printed before (`expected_out`), and one line on stderr says that nothing was
# written and why ("<TOOL>: no <what> written: <path>: cannot be written").
function(check_unwritable_output exe tool path_var what expected_out)
  set(path /nonexistent-dir/${what}.out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${tool}=1 ${path_var}=${path} ${exe}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT err MATCHES "${tool}: no ${what} written: .*${path}: cannot be written")
    message(FATAL_ERROR "an unwritable ${path_var}: exit ${rc}, stderr:\n${err}")
  endif()
  if(NOT out STREQUAL expected_out)
    message(FATAL_ERROR "the program's output changed with an unwritable ${path_var}")
  endif()
endfunction()
