// GRAPH=1: the first backward() for each output path written as Graphviz, with seed 000's edge colours.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tg/tg.h"

namespace tg {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(GraphDot, TheFirstBackwardIsDrawnWithSeed000sColours) {
  std::string path = ::testing::TempDir() + "/tg_graph_" + std::to_string(::getpid()) + ".dot";
  std::string svg = path.substr(0, path.size() - 4) + ".svg";
  Tensor x = Tensor::rand({2, 3}).realize(), w = Tensor::rand({3, 4}).realize().requires_grad_();
  Context ctx{{"GRAPH", 1}, {"GRAPH_PATH", path}};
  ::testing::internal::CaptureStderr();
  (x.matmul(w).relu() * 2).sum().backward();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("GRAPH: "), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
  std::string dot = read_file(path);
  ASSERT_EQ(dot.rfind("digraph", 0), 0u) << dot.substr(0, 200);

  std::map<std::string, std::string> label, fill;
  std::regex node_re(R"re(  (n\d+) \[label="([^"]*)", fillcolor="([^"]*)"\];)re"), edge_re(R"(  (n\d+) -> (n\d+) \[color=(\w+)\];)");
  for (std::sregex_iterator it(dot.begin(), dot.end(), node_re), end; it != end; ++it) label[(*it)[1]] = (*it)[2], fill[(*it)[1]] = (*it)[3];
  std::map<std::string, int> colours;
  bool red_from_data = false, purple_from_op = false;
  for (std::sregex_iterator it(dot.begin(), dot.end(), edge_re), end; it != end; ++it) {
    std::string from = (*it)[1], to = (*it)[2], colour = (*it)[3];
    colours[colour]++;
    ASSERT_TRUE(label.count(from) && label.count(to)) << from << " -> " << to;
    bool from_backward = fill[from] == "#cfe2ff", to_backward = fill[to] == "#cfe2ff";
    // black inside the forward, blue inside the backward, red and purple from the forward into the backward
    EXPECT_EQ(colour == "black", !from_backward && !to_backward) << from << " -> " << to << " " << colour;
    EXPECT_EQ(colour == "blue", from_backward && to_backward) << from << " -> " << to << " " << colour;
    if (colour == "red" || colour == "purple") {
      EXPECT_TRUE(!from_backward && to_backward) << from << " -> " << to;
    }
    // red carries the user's data (x, w, constants, or views of them), purple an intermediate of the forward (the
    // relu's mask its gradient reads)
    std::string op = label[from].substr(0, label[from].find_first_of(" \\"));
    bool data = std::set<std::string>{"BUFFER", "CONST", "RESHAPE", "EXPAND", "PERMUTE", "SHRINK", "PAD", "FLIP"}.count(op) > 0;
    if (colour == "red") {
      EXPECT_TRUE(data) << label[from];
      red_from_data = true;
    }
    if (colour == "purple") {
      EXPECT_FALSE(data) << label[from];
      purple_from_op = true;
    }
  }
  EXPECT_GT(colours["black"], 0);
  EXPECT_GT(colours["blue"], 0);
  EXPECT_TRUE(red_from_data) << dot;
  EXPECT_TRUE(purple_from_op) << dot;
  if (err.find("no SVG") == std::string::npos) {
    EXPECT_NE(read_file(svg).find("<svg"), std::string::npos) << err;
  }

  // only the first backward for a path is drawn (a training loop draws its first step)
  std::remove(path.c_str());
  std::remove(svg.c_str());
  (x.matmul(w) * 3).sum().backward();
  EXPECT_FALSE(std::ifstream(path).good());
}

TEST(GraphDot, AnUnwritablePathIsALineOnStderrAndTheBackwardGoesOn) {
  Tensor w = Tensor::rand({3}).realize().requires_grad_();
  Context ctx{{"GRAPH", 1}, {"GRAPH_PATH", "/nonexistent-dir/net.dot"}};
  ::testing::internal::CaptureStderr();
  (w * w).sum().backward();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("GRAPH: cannot write /nonexistent-dir/net.dot"), std::string::npos) << err;
  std::vector<float> g = w.grad().to_vector<float>(), v = w.to_vector<float>();
  for (size_t i = 0; i < v.size(); i++) EXPECT_FLOAT_EQ(g[i], 2 * v[i]);
}

}  // namespace
}  // namespace tg
