// The on-disk cache of compiled programs (and later of BEAM results), under $XDG_CACHE_HOME/tinygrad.cpp or
// ~/.cache/tinygrad.cpp. An entry stores its full key and a checksum: a corrupt, truncated or colliding entry
// reads as a miss and is rebuilt, never trusted. Writes go to a temporary file renamed into place (atomic).
// DISABLE_COMPILER_CACHE=1 or CACHELEVEL=0 turn it off.
#pragma once
#include <optional>
#include <string>

namespace tg::runtime {

std::optional<std::string> disk_cache_get(const std::string& table, const std::string& key);
void disk_cache_put(const std::string& table, const std::string& key, const std::string& value);
std::string disk_cache_dir();  // where entries go ("" when caching is off)

// 128 bits of hash as 32 hex digits: file names of cache entries.
std::string hash_hex(const std::string& data);

}  // namespace tg::runtime
