// The on-disk cache of compiled programs (and of BEAM results), under $XDG_CACHE_HOME/tinygrad.cpp or
// ~/.cache/tinygrad.cpp. An entry stores its full key and a checksum: a corrupt, truncated or colliding entry
// reads as a miss and is rebuilt, never trusted. An entry is read only when it is a regular file of a plausible
// size (no link is followed, no open can block: a FIFO, a device or a link is a miss). Writes go to a temporary
// file renamed into place, so concurrent processes never see a partial entry. A cache that cannot be written
// (read-only, full disk) only means no caching (a note under DEBUG>=1). DISABLE_COMPILER_CACHE=1 or CACHELEVEL=0
// turn it off.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace tg::runtime {

std::optional<std::string> disk_cache_get(const std::string& table, const std::string& key);
void disk_cache_put(const std::string& table, const std::string& key, const std::string& value);
std::string disk_cache_dir();  // where entries go ("" when caching is off)
std::string disk_cache_path(const std::string& table, const std::string& key);  // the file of one entry

// 128 bits of hash as 32 hex digits: file names of cache entries.
std::string hash_hex(const std::string& data);

// The contents of `path` when it is a regular file of at most max_bytes, opened without following a final link
// and without blocking; nullopt otherwise (absent, a FIFO, a device, a link, too large, or changed while read).
std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes);

}  // namespace tg::runtime
