// File access shared by the state formats (safetensors, npy): read-only mappings and atomic writes.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "tg/error.h"

namespace tg::state {

// A regular file mapped read-only (its size in `size`), unmapped when the last holder lets go: tensors loaded
// from it keep the mapping until their bytes are copied. Errors are tg::ArgumentErrors of `op` naming the file.
std::shared_ptr<const unsigned char> map_file(const std::string& path, size_t& size, const char* op, SourceLocation where);

// The JSON of the whole file at `path` (mapped, not copied), named by its path in errors (base::parse_json).
base::Json parse_json_file(const std::string& path, const char* op, SourceLocation where);

// Writes the pieces one after the other to path + ".tmp" and renames it over `path`: a failed write never leaves
// half a file under the name.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces, const char* op,
                           SourceLocation where);

}  // namespace tg::state
