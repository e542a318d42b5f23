// Small helpers that several layers share, kept at the bottom so that each can call them: the profiler (base),
// the compiler's processes (runtime), the file formats (state).
#pragma once
#include <string>

namespace tg::base {

// s as a JSON string literal: quotes, backslashes and control characters escaped
std::string json_quote(const std::string& s);
// where temporary files go: $TMPDIR, else /tmp
std::string temp_dir();

}  // namespace tg::base
