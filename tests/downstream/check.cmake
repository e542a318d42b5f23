# ctest package.install_and_use: `cmake --install` of this build into a scratch prefix, then tests/downstream built
# against it twice, with find_package(tinygrad_cpp) and with pkg-config, and run.
#   cmake -DBUILD=<build dir> -DSRC=<tests/downstream> -DWORK=<scratch dir> -DCXX=<c++ compiler> -P check.cmake
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
foreach(f include/tg/tg.h include/tg/tensor.h)
  if(NOT EXISTS ${WORK}/prefix/${f})
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()

# 1. CMake: find_package
run("configuring the downstream project" ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/cmake -DCMAKE_PREFIX_PATH=${WORK}/prefix
    -DCMAKE_CXX_COMPILER=${CXX})
run("building it" ${CMAKE_COMMAND} --build ${WORK}/cmake)
run("running it" ${WORK}/cmake/downstream)
message(STATUS "find_package: ${out}")

# 2. a user's code sees no warning from our headers, with either compiler the GUIDE keeps green
find_program(CLANGXX NAMES clang++)
foreach(compiler ${CXX} ${CLANGXX})
  run("compiling with ${compiler} -Wall -Wextra -Werror" ${compiler} -std=c++20 -Wall -Wextra -Werror -fsyntax-only
      -I${WORK}/prefix/include ${SRC}/main.cpp)
endforeach()

# 3. pkg-config, from the installed .pc (relocatable: the prefix is where the file is). Without pkg-config the test
#    says "skipped:" (ctest then reports it skipped, not passed)
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message("skipped: no pkg-config to check tinygrad_cpp.pc with (Debian: pkgconf); find_package worked")
  return()
endif()
file(GLOB_RECURSE pc ${WORK}/prefix/*/tinygrad_cpp.pc)
if(NOT pc)
  message(FATAL_ERROR "the install has no tinygrad_cpp.pc")
endif()
get_filename_component(pc_dir ${pc} DIRECTORY)
run("pkg-config" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG} --cflags --libs tinygrad_cpp)
separate_arguments(flags UNIX_COMMAND "${out}")
run("compiling with pkg-config's flags" ${CXX} -std=c++20 ${SRC}/main.cpp ${flags} -o ${WORK}/downstream_pc)
run("running it" ${WORK}/downstream_pc)
message(STATUS "pkg-config: ${out}")
