# VIZ=1 on a whole program (EXE), its page opened in a real browser: headless Chromium (Debian's chromium) runs the
# page's script, and the DOM it prints must show what the page's data holds: the realize's graph as SVG nodes, a
# search's hits, a kernel's source and its rewrites' rules. A screenshot is kept in ARTIFACTS. An unwritable
# VIZ_PATH only costs a message. Skipped where Chromium is missing: the test's SKIP_REGULAR_EXPRESSION matches
# TG_SKIP (cmake_language(EXIT 77) needs CMake 3.29; the README asks for 3.25).
find_program(CHROMIUM NAMES chromium chromium-browser google-chrome)
if(NOT CHROMIUM)
  message("TG_SKIP: chromium is not installed (Debian: apt-get install chromium)")
  return()
endif()
set(page ${WORK}/viz_page.html)
file(REMOVE ${page})
execute_process(COMMAND ${CMAKE_COMMAND} -E env VIZ=1 VIZ_PATH=${page} ${EXE}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err MATCHES "VIZ: [1-9][0-9]* realizes and [1-9][0-9]* kernels in ${page}")
  message(FATAL_ERROR "${EXE} with VIZ=1: exit ${rc}, stderr:\n${err}")
endif()

# what the page holds, read from its data
file(READ ${page} html)
set(open "<script type=\"application/json\" id=\"viz-data\">")
string(FIND "${html}" "${open}" from)
string(LENGTH "${open}" n)
math(EXPR from "${from} + ${n}")
string(SUBSTRING "${html}" ${from} -1 data)
string(FIND "${data}" "</script>" to)
string(SUBSTRING "${data}" 0 ${to} data)
string(JSON kernel GET "${data}" kernels 0 name)
string(JSON source GET "${data}" kernels 0 source)
string(JSON n_calls LENGTH "${data}" kernels 0 rewrites calls)
string(JSON first_rule GET "${data}" rules 0)

# the DOM after the page's script ran, with the page's data cut off (it would match anything)
function(shown fragment var)
  execute_process(COMMAND ${CHROMIUM} --headless --no-sandbox --disable-gpu --user-data-dir=${WORK}/viz_chromium
                          --dump-dom "file://${page}#${fragment}"
                  OUTPUT_VARIABLE dom ERROR_VARIABLE ignored RESULT_VARIABLE rc TIMEOUT 120)
  string(FIND "${dom}" "<script" cut)
  if(NOT rc EQUAL 0 OR cut LESS 0)
    message(FATAL_ERROR "chromium --dump-dom of #${fragment}: exit ${rc}")
  endif()
  string(SUBSTRING "${dom}" 0 ${cut} dom)
  string(REPLACE "&lt;" "<" dom "${dom}")
  string(REPLACE "&gt;" ">" dom "${dom}")
  string(REPLACE "&amp;" "&" dom "${dom}")
  set(${var} "${dom}" PARENT_SCOPE)
endfunction()
function(count text pattern var)
  string(REGEX MATCHALL "${pattern}" all "${text}")
  list(LENGTH all n)
  set(${var} ${n} PARENT_SCOPE)
endfunction()

# 1. the first realize: its tensor graph drawn, one SVG group per node the graph box says it shows, a SINK at the root
shown("r=0" dom)
count("${dom}" "<g class=\"node" nodes)
string(REGEX MATCH "data-shown=\"([0-9]+)\"" _ "${dom}")
if(nodes LESS 3 OR NOT nodes EQUAL CMAKE_MATCH_1 OR NOT dom MATCHES "<text[^>]*>SINK")
  message(FATAL_ERROR "realize 0's graph: ${nodes} node groups, data-shown=${CMAKE_MATCH_1}:\n${dom}")
endif()
# 2. a search marks the matching nodes
shown("r=0&q=SINK" dom)
count("${dom}" "<g class=\"node hit" hits)
if(hits LESS 1)
  message(FATAL_ERROR "a search for SINK marked no node:\n${dom}")
endif()
# 3. the first kernel's source, as the page's data has it: its lines containing the kernel's name
shown("k=0&t=source" dom)
string(FIND "${dom}" "<pre id=\"source\">" at)
string(FIND "${dom}" "</pre>" end REVERSE)
math(EXPR len "${end} - ${at}")
string(SUBSTRING "${dom}" ${at} ${len} pre)
string(REGEX MATCHALL "[^\n]*${kernel}[^\n]*" lines "${source}")
list(LENGTH lines n_lines)
if(n_lines EQUAL 0 OR NOT dom MATCHES "kernel ${kernel} on CPU")
  message(FATAL_ERROR "kernel ${kernel}: not shown as the title, or no line of its source names it:\n${dom}")
endif()
foreach(line ${lines})
  string(FIND "${pre}" "${line}" at)
  if(at LESS 0)
    message(FATAL_ERROR "kernel ${kernel}'s source line \"${line}\" is not on the page:\n${dom}")
  endif()
endforeach()
# 4. its rewrites, unfolded: each rule application shown with its rule
shown("k=0&t=rewrites&open=all" dom)
count("${dom}" "<div class=\"rule\">rule UPat\\(" rules)
string(JSON n_steps LENGTH "${data}" kernels 0 rewrites calls 0 steps)
if(n_calls GREATER 0 AND rules LESS n_steps)
  message(FATAL_ERROR "kernel ${kernel}: ${rules} rules shown, its first rewrite alone has ${n_steps} steps:\n${dom}")
endif()

# the screenshot, kept as an artifact
file(MAKE_DIRECTORY ${ARTIFACTS})
set(shot ${ARTIFACTS}/viz_page.png)
file(REMOVE ${shot})
execute_process(COMMAND ${CHROMIUM} --headless --no-sandbox --disable-gpu --user-data-dir=${WORK}/viz_chromium
                        --window-size=1400,900 --screenshot=${shot} "file://${page}#r=0"
                OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
file(SIZE ${shot} size)
if(size LESS 10000)
  message(FATAL_ERROR "the screenshot ${shot} has ${size} bytes")
endif()

# an unwritable place: a message, and the program's own output unchanged
include(${CMAKE_CURRENT_LIST_DIR}/unwritable_output.cmake)
check_unwritable_output(${EXE} VIZ VIZ_PATH page "${out}")
message(STATUS "kernel ${kernel}: ${n_lines} source lines found, ${rules} rules shown; realize 0: ${nodes} nodes; screenshot ${shot}")
