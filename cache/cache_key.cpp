#include "cache/cache_key.h"

#include <algorithm>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ft {
namespace {

// Streaming XXH3-128 where every piece is preceded by its length (8 bytes,
// little-endian), which makes the concatenation unambiguous.
class KeyHasher {
 public:
  KeyHasher() {
    state_ = XXH3_createState();
    XXH3_128bits_reset(state_);
  }
  ~KeyHasher() { XXH3_freeState(state_); }
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;

  void add_u64(uint64_t v) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));
    XXH3_128bits_update(state_, bytes, sizeof(bytes));
  }
  void add(std::string_view piece) {
    add_u64(piece.size());
    XXH3_128bits_update(state_, piece.data(), piece.size());
  }
  std::string hex() const {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state_));
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(32);
    for (unsigned char b : canonical.digest) {
      out.push_back(kDigits[b >> 4]);
      out.push_back(kDigits[b & 15]);
    }
    return out;
  }

 private:
  XXH3_state_t* state_;
};

}  // namespace

std::string hash_sources(std::string_view source,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<const std::pair<std::string, std::string>*> sorted;
  sorted.reserve(headers.size());
  for (const auto& h : headers) sorted.push_back(&h);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return *a < *b; });

  KeyHasher hasher;
  hasher.add(source);
  hasher.add_u64(sorted.size());
  for (const auto* h : sorted) {
    hasher.add(h->first);
    hasher.add(h->second);
  }
  return hasher.hex();
}

std::string compute_cache_key(const CacheKeyFields& fields) {
  KeyHasher hasher;
  hasher.add_u64(static_cast<uint64_t>(kCacheFormatVersion));
  for (const std::string* field :
       {&fields.kernel, &fields.entry, &fields.template_args, &fields.arch, &fields.toolchain,
        &fields.toolchain_version, &fields.flags, &fields.source_hash}) {
    hasher.add(*field);
  }
  return hasher.hex();
}

}  // namespace ft
