# Finds pybind11 (Debian's pybind11-dev) for the Python package without failing the configure where it is missing.
# The interpreter is TG_PYTHON_EXECUTABLE: a given Python3_EXECUTABLE (pip's build passes the venv's), else Debian's
# /usr/bin/python3 (which has pybind11, numpy, torch and pytest), else the first python3 on PATH. It sets
# TG_PYBIND11_FOUND and, when found, the pybind11::module target.
if(DEFINED Python3_EXECUTABLE)
  set(_tg_py_default "${Python3_EXECUTABLE}")
elseif(EXISTS /usr/bin/python3)
  set(_tg_py_default /usr/bin/python3)
else()
  find_program(_tg_py_default NAMES python3 python)
endif()
set(TG_PYTHON_EXECUTABLE "${_tg_py_default}" CACHE FILEPATH "The Python the tinygrad package is built for and tested with")
set(TG_PYBIND11_FOUND OFF)
if(TG_PYTHON_EXECUTABLE)
  set(Python3_EXECUTABLE "${TG_PYTHON_EXECUTABLE}")
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND AND NOT DEFINED pybind11_DIR)
    execute_process(COMMAND "${Python3_EXECUTABLE}" -m pybind11 --cmakedir OUTPUT_VARIABLE _tg_pybind11_dir
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _tg_pybind11_rc)
    if(_tg_pybind11_rc EQUAL 0)
      set(pybind11_DIR "${_tg_pybind11_dir}" CACHE PATH "pybind11's CMake package folder")
    endif()
  endif()
  if(Python3_FOUND)
    # Python3 already found: pybind11 uses CMake's FindPython mode with this same interpreter
    find_package(pybind11 CONFIG QUIET)
    if(pybind11_FOUND)
      set(TG_PYBIND11_FOUND ON)
    endif()
  endif()
endif()
if(NOT TG_PYBIND11_FOUND)
  message(STATUS "pybind11 or Python headers not found: the Python package is not built (apt-get install pybind11-dev python3-dev)")
endif()
