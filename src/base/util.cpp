#include "base/util.h"

#include <cstdio>
#include <cstdlib>

namespace tg::base {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

std::string per_rank(const std::string& path) {
  auto env = [](const char* a, const char* b) {
    const char* v = std::getenv(a);
    if (!v || !*v) v = std::getenv(b);
    return v && *v ? std::atol(v) : -1L;
  };
  long rank = env("OMPI_COMM_WORLD_RANK", "PMI_RANK"), size = env("OMPI_COMM_WORLD_SIZE", "PMI_SIZE");
  if (size <= 1 || rank < 0) return path;
  size_t slash = path.rfind('/'), dot = path.rfind('.');
  bool has_ext = dot != std::string::npos && dot > 0 && (slash == std::string::npos || dot > slash + 1);
  std::string tag = ".rank" + std::to_string(rank);
  return has_ext ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

}  // namespace tg::base
