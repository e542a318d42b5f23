# beautiful_mnist trains on DEV as on the CPU. Both run with the same SEED (the same initial weights and batches)
# for 3 steps: the test accuracies must agree within 1% (they differ only by float rounding: sums in another order).
# Not more steps: Adam's first steps divide each gradient by its own magnitude, so a gradient near 0 flips sign on
# a rounding difference and runs part ways (the CPU with and without NOOPT are 6% apart after one step). Then DEV
# trains STEPS steps and must pass 50% (10% is chance).
# Prints "skipped:" where Fashion-MNIST is not installed or DEV cannot be opened.
if(NOT EXISTS /usr/share/datasets/fashion-mnist)
  message(STATUS "skipped: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)")
  return()
endif()
function(accuracy dev steps out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DEV=${dev} SEED=7 STEPS=${steps} BS=128 ${EXE}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    if(err MATCHES "DeviceError" AND NOT dev STREQUAL "CPU")
      message(STATUS "skipped: ${err}")
      set(${out_var} "" PARENT_SCOPE)
      return()
    endif()
    message(FATAL_ERROR "DEV=${dev} beautiful_mnist exited with ${rc}:\n${out}\n${err}")
  endif()
  string(REGEX MATCH "test accuracy: ([0-9]+)\\.([0-9][0-9])%" m "${out}")
  message(STATUS "DEV=${dev} STEPS=${steps}: ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}%")
  math(EXPR hundredths "${CMAKE_MATCH_1} * 100 + ${CMAKE_MATCH_2}")  # printed with two decimals
  set(${out_var} ${hundredths} PARENT_SCOPE)
endfunction()

accuracy(CPU 3 cpu)
accuracy(${DEV} 3 other)
if(other STREQUAL "")
  return()
endif()
math(EXPR diff "${cpu} - ${other}")
if(diff GREATER 100 OR diff LESS -100)
  message(FATAL_ERROR "after 3 steps DEV=${DEV} is at ${other}, the CPU at ${cpu} (hundredths of a percent): more than 1% apart")
endif()
accuracy(${DEV} ${STEPS} trained)
if(trained LESS 5000)
  message(FATAL_ERROR "DEV=${DEV} reached only ${trained} hundredths of a percent after ${STEPS} steps: not learning")
endif()
