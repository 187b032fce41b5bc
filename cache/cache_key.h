// Cache keys for compiled code objects.
//
// A key is an XXH3-128 digest over everything that shaped a code object, so a
// change to any input (a header's contents, a target-ID feature, the compiler
// version) yields a different key and therefore a recompile, never a stale hit.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ft {

// Bump when the meaning of a stored code object or of the key changes; old rows
// then simply stop matching.
inline constexpr int kCacheFormatVersion = 1;

// Everything that shaped a code object. All strings; empty is allowed.
struct CacheKeyFields {
  std::string kernel;             // catalog name, e.g. "rmsnorm_bf16_h4096"
  std::string entry;              // entry expression, e.g. "ft::rmsnorm<ft::bf16,4096,256>"
  std::string template_args;      // e.g. "bf16,4096,256"
  std::string arch;               // full target id with features, e.g. "gfx90a:xnack-" or "sm_90a"
  std::string toolchain;          // "clang", "hiprtc", "nvrtc"
  std::string toolchain_version;  // e.g. "19.1.7"
  std::string flags;              // canonical flag list, one string (space-joined, sorted by the caller)
  std::string source_hash;        // 32 hex chars, see hash_sources()

  bool operator==(const CacheKeyFields&) const = default;
};

// XXH3-128 over the generated source text and the (name, contents) of every
// header it includes, as 32 lowercase hex chars. Header order does not matter:
// the pairs are sorted before hashing. Every piece is length-prefixed, so
// moving text between the source, a name and a contents changes the digest.
std::string hash_sources(std::string_view source,
                         const std::vector<std::pair<std::string, std::string>>& headers);

// XXH3-128 over kCacheFormatVersion and every field of `fields`, each
// length-prefixed, as 32 lowercase hex chars.
std::string compute_cache_key(const CacheKeyFields& fields);

}  // namespace ft
