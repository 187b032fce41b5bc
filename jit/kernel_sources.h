// Host access to the kernel sources embedded at build time. Setting
// FT_KERNEL_SRC_DIR to a directory makes the JIT read sources from there
// instead (for kernel development without rebuilding).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

// The text of one kernel source or header by file name ("rmsnorm.hip").
Result<std::string> kernel_source(const std::string& name);

// Every header that `text` includes with #include "..." (transitively), as
// (file name, contents) pairs sorted by name.
Result<std::vector<std::pair<std::string, std::string>>> included_headers(const std::string& text);

// Every embedded file name.
std::vector<std::string> kernel_source_names();

}  // namespace ft
