#include "runtime/disk_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tg/context.h"

namespace tg::runtime {

namespace {

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; i++) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool get_u64(const std::string& in, size_t& at, uint64_t& v) {
  if (at + 8 > in.size()) return false;
  v = 0;
  for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += 8;
  return true;
}

constexpr char kMagic[4] = {'T', 'G', 'C', '1'};

void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); i++)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

}  // namespace

std::string hash_hex(const std::string& data) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(data, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv1a(data, 0x84222325cbf29ce4ull ^ data.size())));
  return buf;
}

std::string disk_cache_dir() {
  if (getenv_int("DISABLE_COMPILER_CACHE") != 0 || getenv_int("CACHELEVEL", 1) == 0) return "";
  std::string base = getenv_str("XDG_CACHE_HOME");
  if (base.empty()) {
    std::string home = getenv_str("HOME");
    if (home.empty()) return "";
    base = home + "/.cache";
  }
  return base + "/tinygrad.cpp";
}

std::optional<std::string> disk_cache_get(const std::string& table, const std::string& key) {
  std::string dir = disk_cache_dir();
  if (dir.empty()) return std::nullopt;
  std::ifstream f(dir + "/" + table + "/" + hash_hex(key), std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string in = ss.str();
  // layout: magic, key length, key, value length, value, checksum of everything before it
  size_t at = 4;
  uint64_t klen = 0, vlen = 0, sum = 0;
  if (in.size() < 4 || std::memcmp(in.data(), kMagic, 4) != 0) return std::nullopt;
  if (!get_u64(in, at, klen) || klen > in.size() - at || in.compare(at, klen, key) != 0 || klen != key.size()) return std::nullopt;
  at += klen;
  if (!get_u64(in, at, vlen) || vlen > in.size() - at) return std::nullopt;
  std::string value = in.substr(at, vlen);
  at += vlen;
  size_t body = at;
  if (!get_u64(in, at, sum) || at != in.size() || sum != fnv1a(in.substr(0, body), 0xcbf29ce484222325ull)) return std::nullopt;
  return value;
}

void disk_cache_put(const std::string& table, const std::string& key, const std::string& value) {
  std::string dir = disk_cache_dir();
  if (dir.empty()) return;
  dir += "/" + table;
  make_dirs(dir);
  std::string out(kMagic, 4);
  put_u64(out, key.size());
  out += key;
  put_u64(out, value.size());
  out += value;
  put_u64(out, fnv1a(out, 0xcbf29ce484222325ull));
  std::string path = dir + "/" + hash_hex(key);
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;  // an unwritable cache only costs time
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace tg::runtime
