// Several devices (tinygrad's multi): a tensor held by several devices is a MULTI node, one source per device and
// the axis it is split along (-1: every device holds all of it). The Tensor layer builds graphs over MULTI nodes
// at their whole shapes, and autograd differentiates them like any graph. Before scheduling, lower() rewrites such
// a graph into one graph per device: every op runs on each device's part, a value is moved between devices by
// COPYs where two parts do not line up, and a reduction over the split axis ends in an allreduce. The scheduler
// then sees ordinary single-device graphs joined by copies.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device.h"
#include "uop/uop.h"

namespace tg::multi {

// A device name that names several devices joins them with commas: "CPU,CPU:1" (runtime/device.h).
using runtime::is_multi;
std::vector<std::string> split_devices(const std::string& device);
std::string join_devices(const std::vector<std::string>& devices);

// How n elements are split between k devices: ceil(n / k) each, the last ones fewer (possibly none), as tinygrad.
std::vector<std::pair<int64_t, int64_t>> even_bounds(int64_t n, size_t k);

// A value held by several devices, after lowering: one single-device node per device.
struct Sharded {
  std::vector<std::string> devices;
  std::vector<uop::UOp> shards;
  int64_t axis = -1;  // the split axis, or -1: each shard is the whole value
};

struct Lowered {
  std::vector<uop::UOp> outputs;  // single-device nodes to realize (each multi output gives one per device)
  // every multi node of the graph with its lowered form, sources first: what a realized one becomes
  std::vector<std::pair<uop::UOp, Sharded>> multis;
  // every single-device node whose graph changed (it reads a multi value) with its lowered form
  std::vector<std::pair<uop::UOp, uop::UOp>> singles;
};

// Called by whatever makes a node naming several devices: until then no graph can involve them, and
// involves_multi answers without walking the graph.
void note_multi_used();
// Whether any root's graph involves several devices (a MULTI node or a DEVICE naming several).
bool involves_multi(const std::vector<uop::UOp>& roots);
// The roots' graphs rewritten per device (tinygrad's multi_pm). ArgumentError for what cannot be split yet
// (symbolic shapes).
Lowered lower(const std::vector<uop::UOp>& roots);

}  // namespace tg::multi
