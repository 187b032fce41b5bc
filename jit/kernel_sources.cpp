#include "jit/kernel_sources.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "runtime/base/files.h"

namespace ft {
namespace detail {
extern const std::pair<std::string_view, std::string_view> kEmbeddedSources[];
extern const int kEmbeddedSourceCount;
}  // namespace detail

Result<std::string> kernel_source(const std::string& name) {
  if (const char* dir = std::getenv("FT_KERNEL_SRC_DIR"); dir && *dir) return read_file(std::string(dir) + "/" + name);
  for (int i = 0; i < detail::kEmbeddedSourceCount; ++i)
    if (detail::kEmbeddedSources[i].first == name) return std::string(detail::kEmbeddedSources[i].second);
  return FT_ERROR(ErrorCode::kNotFound, "no kernel source named '{}' is built in", name);
}

std::vector<std::string> kernel_source_names() {
  std::vector<std::string> names;
  for (int i = 0; i < detail::kEmbeddedSourceCount; ++i) names.emplace_back(detail::kEmbeddedSources[i].first);
  return names;
}

namespace {

// The quoted includes of `text`, in order: #include "x.h". Angle-bracket
// includes are not followed: kernel sources include no system header.
std::vector<std::string> quoted_includes(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("#include", pos)) != std::string::npos) {
    size_t line_start = text.rfind('\n', pos);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    bool at_line_start = text.find_first_not_of(" \t", line_start) == pos;
    pos += 8;
    if (!at_line_start) continue;
    size_t open = text.find_first_not_of(" \t", pos);
    if (open == std::string::npos || text[open] != '"') continue;
    size_t close = text.find('"', open + 1);
    if (close == std::string::npos) break;
    out.push_back(text.substr(open + 1, close - open - 1));
    pos = close;
  }
  return out;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> included_headers(const std::string& text) {
  std::map<std::string, std::string> found;
  std::vector<std::string> todo = quoted_includes(text);
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (found.count(name)) continue;
    FT_ASSIGN_OR_RETURN(std::string body, kernel_source(name));
    for (auto& inc : quoted_includes(body)) todo.push_back(inc);
    found.emplace(name, std::move(body));
  }
  return std::vector<std::pair<std::string, std::string>>(found.begin(), found.end());
}

}  // namespace ft
