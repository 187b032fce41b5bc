// Small filesystem helpers that return errors as values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

Result<std::string> read_file(const std::string& path);
// Writes to a temporary file beside `path` and renames it over, so a reader
// never sees half a file and a full disk leaves the old contents in place.
Status write_file_atomic(const std::string& path, const void* data, size_t size);
Status make_dirs(const std::string& path);
// $XDG_CACHE_HOME/freetoken, else $HOME/.cache/freetoken, else /tmp/freetoken-cache.
std::string default_cache_dir();
// A fresh directory under $TMPDIR (or /tmp), named with `prefix`.
Result<std::string> make_temp_dir(const std::string& prefix);
Status remove_tree(const std::string& path);
// Directory of the running executable (from /proc/self/exe).
std::string executable_dir();

}  // namespace ft
