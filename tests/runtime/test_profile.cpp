// The profiler's trace: Chrome trace-event JSON (read back with our strict JSON reader) holding the spans of what ran.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/json.h"
#include "state/file_io.h"
#include "support/expect_error.h"
#include "tg/tg.h"

namespace tg {
namespace {

struct Span {
  std::string name, cat, lane;
  double ts = 0, dur = 0;
  const base::Json* args = nullptr;
};

const base::Json* member(const base::Json& o, const std::string& key) {
  for (const auto& [k, v] : o.members)
    if (k == key) return &v;
  return nullptr;
}

// the "X" events of a saved trace, each with its row's name
std::vector<Span> spans_of(const base::Json& trace) {
  std::vector<Span> out;
  const base::Json* events = member(trace, "traceEvents");
  EXPECT_TRUE(events && events->kind == base::Json::Kind::Array);
  if (!events) return out;
  std::vector<std::pair<int64_t, std::string>> rows;
  for (const base::Json& e : events->items)
    if (member(e, "ph")->str == "M" && member(e, "name")->str == "thread_name")
      rows.emplace_back(member(e, "tid")->integer, member(*member(e, "args"), "name")->str);
  for (const base::Json& e : events->items) {
    if (member(e, "ph")->str != "X") continue;
    Span s{member(e, "name")->str, member(e, "cat")->str, "", member(e, "ts")->number, member(e, "dur")->number, member(e, "args")};
    for (const auto& [tid, name] : rows)
      if (tid == member(e, "tid")->integer) s.lane = name;
    out.push_back(s);
  }
  return out;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/tg_profile_" + std::to_string(::getpid()) + "_" + name;
}

TEST(Profile, ATraceHoldsTheKernelsCompilesAndSchedulesOfARealize) {
  profile::clear();
  profile::start();
  // a constant no other test uses: its kernel is compiled here, not found in a cache
  float c = 1.0f + static_cast<float>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000) * 1e-6f;
  Tensor x = Tensor::arange(1000).cast(dtypes::float32).realize();
  {
    profile::Span user("my \"phase\"\n");
    user.arg("step", "3");
    user.arg("note", "007");
    (x * c + 2.5f).realize();
  }
  profile::stop();
  (x * c - 1.0f).realize();  // not recorded
  std::string path = temp_path("a.json");
  size_t n = profile::save(path);
  EXPECT_GT(n, 3u);
  base::Json trace = state::parse_json_file(path, "test", SourceLocation::current());
  std::vector<Span> spans = spans_of(trace);
  EXPECT_EQ(spans.size(), n);
  const Span *kernel = nullptr, *compile = nullptr, *schedule = nullptr, *realize = nullptr, *user = nullptr;
  for (const Span& s : spans) {
    EXPECT_GE(s.ts, 0) << s.name;
    EXPECT_GE(s.dur, 0) << s.name;
    if (s.cat == "kernel") kernel = &s;
    if (s.cat == "compile") compile = compile ? compile : &s;
    if (s.cat == "schedule") schedule = &s;
    if (s.cat == "realize") realize = &s;
    if (s.cat == "user") user = &s;
  }
  ASSERT_TRUE(kernel && compile && schedule && realize && user);
  // the elementwise kernel of the user's span: on the CPU's row, reading and writing 1000 floats
  EXPECT_EQ(kernel->lane, "CPU");
  EXPECT_EQ(member(*kernel->args, "bytes")->integer, 8000);
  EXPECT_GE(member(*kernel->args, "ops")->integer, 2000);
  EXPECT_EQ(kernel->name.rfind("E_", 0), 0u) << kernel->name;
  // nested as they ran: schedule and kernel inside the realize, the realize inside the user's span
  EXPECT_GE(schedule->ts, realize->ts);
  EXPECT_LE(kernel->ts + kernel->dur, realize->ts + realize->dur + 1e-3);
  EXPECT_GE(realize->ts, user->ts);
  EXPECT_EQ(user->name, "my \"phase\"\n");
  EXPECT_EQ(member(*user->args, "step")->kind, base::Json::Kind::Int);
  EXPECT_EQ(member(*user->args, "note")->str, "007");  // not a JSON number: kept as the string it is
  EXPECT_NE(user->lane, "CPU");
  std::remove(path.c_str());
}

TEST(Profile, AnUnwritablePathIsAClearErrorAndTheEventsStay) {
  profile::clear();
  profile::start();
  Tensor::ones({4}).contiguous().realize();
  profile::stop();
  testing::expect_error<ArgumentError>([] { profile::save("/nonexistent-dir/trace.json"); }, "profile::save",
                                       {"/nonexistent-dir/trace.json", "cannot be written"}, "test_profile.cpp");
  std::string path = temp_path("b.json");
  EXPECT_GT(profile::save(path), 0u);
  std::remove(path.c_str());
  profile::clear();
  EXPECT_EQ(profile::save(path), 0u);  // cleared: an empty trace, still valid JSON
  EXPECT_TRUE(spans_of(state::parse_json_file(path, "test", SourceLocation::current())).empty());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tg
