// VIZ: the rewrite tracking under it (uop/track.h), and the page's data (read back with our strict JSON reader)
// against what the library itself holds: the kernel cache's source, the graphs' nodes, the rules that fired.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "base/util.h"
#include "engine/kernel_cache.h"
#include "runtime/device.h"
#include "schedule/schedule.h"
#include "base/json.h"
#include "support/expect_error.h"
#include "support/scratch.h"
#include "tg/tg.h"
#include "uop/symbolic.h"
#include "uop/track.h"

namespace tg {
namespace {

using uop::UOp;

const base::Json& at(const base::Json& o, const std::string& key) {
  for (const auto& [k, v] : o.members)
    if (k == key) return v;
  throw std::runtime_error("no member " + key);
}

// the JSON inside a saved page
base::Json page_data(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string page = ss.str();
  const std::string open = "<script type=\"application/json\" id=\"viz-data\">";
  size_t from = page.find(open), to = page.find("</script>", from);
  EXPECT_NE(from, std::string::npos);
  from += open.size();
  return base::parse_json(page.substr(from, to - from), "test", path, SourceLocation::current());
}

// a node of the page's table as "OP dtype arg"
std::string node_str(const base::Json& data, int64_t id) {
  const base::Json& n = at(data, "nodes").items.at(id);
  return at(data, "ops").items.at(n.items[0].integer).str + " " + n.items[1].str + " " + n.items[2].str;
}

TEST(VizTracking, AGraphRewriteRecordsEachRuleThatFiredOnWhat) {
  UOp x = UOp::variable("x", 0, 100);
  UOp e = (x * 1) + 0;
  uop::RewriteLog log;
  UOp r;
  {
    uop::TrackRewrites track(&log);
    r = uop::simplify(e);
    uop::simplify(x);  // nothing to do: counted, not kept
  }
  uop::simplify(x * 1);  // not tracked: the scope has ended
  EXPECT_EQ(r, x);
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.unchanged_calls, 1u);
  const uop::RewriteCall& call = log.calls[0];
  EXPECT_EQ(call.in, e);
  EXPECT_EQ(call.out, x);
  // x*1 -> x first (sources before users), then x+0 -> x
  ASSERT_EQ(call.steps.size(), 2u);
  EXPECT_EQ(call.steps[0].before, x * 1);
  EXPECT_EQ(call.steps[0].after, x);
  EXPECT_NE(call.steps[0].rule.find("MUL"), std::string::npos) << call.steps[0].rule;
  EXPECT_EQ(call.steps[1].before, x + 0);
  EXPECT_EQ(call.steps[1].after, x);
  EXPECT_NE(call.steps[1].rule.find("ADD"), std::string::npos) << call.steps[1].rule;
  EXPECT_EQ(uop::rewrite_log(), nullptr);
}

TEST(Viz, APageHoldsARealizeItsScheduleAndItsKernelsSourceAndRewrites) {
  viz::clear();
  viz::start();
  // a constant no other test uses: its kernel is compiled here, not found in a cache
  float c = 3.0f + static_cast<float>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000) * 1e-6f;
  Tensor x = Tensor::arange(24).reshape({4, 6}).cast(dtypes::float32);
  Tensor y = ((x * c).exp2() + 1).sum(1);
  y.realize();
  viz::stop();
  Tensor z = (x + c).realize();  // after stop(): not recorded
  std::string path = testing::scratch_path("viz.html");
  EXPECT_EQ(viz::save(path), 1u);
  base::Json data = page_data(path);

  const base::Json& realizes = at(data, "realizes");
  ASSERT_EQ(realizes.items.size(), 1u);
  const base::Json& rz = realizes.items[0];
  EXPECT_NE(at(rz, "where").str.find("test_viz.cpp"), std::string::npos) << at(rz, "where").str;
  // the tensor graph: a SINK whose nodes hold the EXP2 and the sum
  std::string graph;
  std::vector<int64_t> stack{at(rz, "graph").integer};
  while (!stack.empty()) {
    int64_t id = stack.back();
    stack.pop_back();
    graph += node_str(data, id) + "\n";
    for (const base::Json& s : at(data, "nodes").items.at(id).items[3].items) {
      EXPECT_LT(s.integer, id);  // numbered sources first
      stack.push_back(s.integer);
    }
  }
  EXPECT_EQ(graph.rfind("SINK", 0), 0u) << graph;
  EXPECT_NE(graph.find("EXP2 float32"), std::string::npos) << graph;
  EXPECT_NE(graph.find("REDUCE_AXIS float32 (ADD, (1,))"), std::string::npos) << graph;
  // the schedule: one kernel, the one whose record follows, with its output buffer of 4 floats first
  const base::Json& items = at(rz, "items");
  ASSERT_EQ(items.items.size(), 1u);
  EXPECT_EQ(at(items.items[0], "kind").str, "kernel");
  EXPECT_NE(at(items.items[0], "bufs").items.at(0).str.find("(4):float32"), std::string::npos);
  std::vector<std::string> stages;
  for (const base::Json& s : at(rz, "stages").items) stages.push_back(s.items.at(0).str);
  EXPECT_EQ(stages, (std::vector<std::string>{"schedule", "run"}));

  const base::Json& kernels = at(data, "kernels");
  ASSERT_EQ(kernels.items.size(), 1u);
  const base::Json& k = kernels.items[0];
  EXPECT_EQ(at(k, "name").str, at(items.items[0], "kernel").str);
  EXPECT_EQ(at(k, "device").str, "CPU");
  // the source is the one the kernel cache holds for this AST (the same graph again: the same interned nodes)
  schedule::Schedule again = schedule::create_schedule({((x * c).exp2() + 1).sum(1).uop()});
  ASSERT_EQ(again.items.size(), 1u);
  auto cached = engine::get_kernel(again.items[0].ast, runtime::get_device("CPU"));
  EXPECT_EQ(at(k, "name").str, cached->name);
  EXPECT_EQ(at(k, "source").str, cached->rendered.source);
  EXPECT_NE(at(k, "uops").str.find("EXP2"), std::string::npos);
  EXPECT_EQ(node_str(data, at(k, "ast").integer).rfind("SINK", 0), 0u);
  EXPECT_EQ(node_str(data, at(k, "lowered").integer).rfind("SINK", 0), 0u);
  stages.clear();
  for (const base::Json& s : at(k, "stages").items) stages.push_back(s.items.at(0).str);
  ASSERT_GE(stages.size(), 4u);
  EXPECT_EQ(stages.front(), "lower");
  EXPECT_EQ(stages.back(), "compile");
  // lowering simplified its index math: each recorded rewrite names rules of the table, on nodes of the table
  const base::Json& calls = at(at(k, "rewrites"), "calls");
  ASSERT_FALSE(calls.items.empty());
  size_t n_rules = at(data, "rules").items.size(), n_nodes = at(data, "nodes").items.size();
  for (const base::Json& call : calls.items) {
    EXPECT_LT(at(call, "in").integer, static_cast<int64_t>(n_nodes));
    ASSERT_FALSE(at(call, "steps").items.empty());
    for (const base::Json& step : at(call, "steps").items) {
      EXPECT_LT(step.items.at(0).integer, static_cast<int64_t>(n_rules));
      EXPECT_NE(step.items.at(1).integer, step.items.at(2).integer);  // a step changes its node
    }
  }
  EXPECT_NE(at(data, "rules").items.at(0).str.find("UPat("), std::string::npos);
}

TEST(Viz, RecordingHoldsNoGraphAndSoNoBuffer) {
  viz::clear();
  viz::start();
  int64_t before = GlobalCounters::mem_used;
  {
    Tensor x = Tensor(std::vector<float>(50000, 1.5f), {50000}).realize();  // a buffer in the recorded graph of y
    Tensor y = (x * 2).realize();
    EXPECT_GE(GlobalCounters::mem_used, before + 2 * 50000 * 4);
  }
  EXPECT_EQ(GlobalCounters::mem_used, before);
  viz::stop();
  viz::clear();
}

TEST(Viz, NothingIsRecordedWhileOffAndAnUnwritablePathIsAnArgumentError) {
  viz::stop();
  viz::clear();
  EXPECT_FALSE(viz::enabled());
  Tensor::arange(7).cast(dtypes::float32).exp().realize();
  std::string path = testing::scratch_path("empty_viz.html");
  EXPECT_EQ(viz::save(path), 0u);
  EXPECT_TRUE(at(page_data(path), "kernels").items.empty());
  testing::expect_error<ArgumentError>([] { viz::save("/nonexistent-dir/viz.html"); }, "viz::save",
                                       {"/nonexistent-dir/viz.html", "cannot be written"}, "test_viz.cpp");
}

}  // namespace
}  // namespace tg

namespace tg {
namespace {

// in a job of several MPI processes each rank's PROFILE, VIZ and GRAPH file gets its own name (ctest
// mpi.tool_outputs_one_file_per_rank checks it under a real mpirun)
TEST(OutputPaths, EachRankOfAnMpiJobWritesItsOwnFile) {
  ::unsetenv("PMI_RANK"), ::unsetenv("PMI_SIZE");
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1), ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  EXPECT_EQ(base::per_rank("/tmp/viz.html"), "/tmp/viz.rank1.html");
  EXPECT_EQ(base::per_rank("/tmp/a.b/net"), "/tmp/a.b/net.rank1");  // a dot in a folder's name is no extension
  EXPECT_EQ(base::per_rank("/tmp/.hidden"), "/tmp/.hidden.rank1");
  ::setenv("OMPI_COMM_WORLD_SIZE", "1", 1);  // one process: the name as given
  EXPECT_EQ(base::per_rank("/tmp/viz.html"), "/tmp/viz.html");
  ::unsetenv("OMPI_COMM_WORLD_RANK"), ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::setenv("PMI_RANK", "0", 1), ::setenv("PMI_SIZE", "4", 1);  // MPICH, Slurm
  EXPECT_EQ(base::per_rank("trace.json"), "trace.rank0.json");
  ::unsetenv("PMI_RANK"), ::unsetenv("PMI_SIZE");
  EXPECT_EQ(base::per_rank("trace.json"), "trace.json");
}

}  // namespace
}  // namespace tg
