// VIZ: a self-contained web page of what the library did, one entry per realize: the tensor graph, the schedule
// (kernels, copies and their buffers), and for each kernel its AST, every graph rewrite with the rules that fired
// step by step, the lowered kernel, the linearized uops and the generated source, with the time each stage took.
// It is one HTML file with no outside dependency; open it in any browser.
//
//   VIZ=1 ./build/bin/beautiful_mnist     records the run and writes the page when the process ends: to VIZ_PATH,
//                                         else $TMPDIR/tinygrad_cpp_viz.html (or /tmp), and says where on stderr
//   tg::viz::start(); ...; tg::viz::save("viz.html");   the same from code, for a part of a run
//
// Recording stores the graphs' nodes as text in a table of its own (a node seen again is stored once), so it holds
// no graph and no buffer alive; it costs time in every realize and compile, and nothing while off. A page keeps at
// most kMaxRealizes realizes and kMaxKernels kernels (later ones are counted; the page and the line on stderr say
// what was left out).
#pragma once
#include <cstddef>
#include <string>

#include "tg/error.h"

namespace tg::viz {

inline constexpr size_t kMaxRealizes = 1000;
inline constexpr size_t kMaxKernels = 5000;

// Whether realizes are being recorded: after start() and before stop(), or from the start when the environment
// has VIZ=1 (read once).
bool enabled();
void start();
void stop();
// Forgets what was recorded so far.
void clear();
// Writes the page of what was recorded so far to `path` (it stays recorded); returns how many realizes it shows.
// Raises tg::ArgumentError naming the path and the caller's line when it cannot be written.
size_t save(const std::string& path, SourceLocation where = SourceLocation::current());

}  // namespace tg::viz
