// GRAPH=1 (graph_dot.cpp): the graph of a backward() or gradient() drawn with Graphviz.
#pragma once
#include <vector>

#include "uop/uop.h"

namespace tg::viz {

// With GRAPH=1, the first call for each output path (GRAPH_PATH, else net.dot in $TMPDIR or /tmp: a training loop
// draws its first step) writes the forward graph of `root` and the backward graph of `grads` (the gradients it
// computed) in Graphviz's dot language, and as SVG beside it when Graphviz's dot is on PATH. Seed 000's colours: forward edges black, backward edges blue,
// edges from the forward into the backward red where they carry data the user made (buffers, constants) and
// purple where they carry an intermediate of the forward. Every failure is a line on stderr: the program goes on.
void draw_autograd_graph(const uop::UOp& root, const std::vector<uop::UOp>& grads);

}  // namespace tg::viz
