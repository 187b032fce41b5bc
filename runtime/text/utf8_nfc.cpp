#include "runtime/text/utf8_nfc.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/text/utf8.h"

namespace ft {
namespace {

struct NfcCccRange {
  char32_t first, last;
  uint8_t ccc;
};
struct NfcDecomposition {
  char32_t cp, first, second;  // second is 0 for a singleton
};
struct NfcComposition {
  char32_t first, second, composite;
};
struct NfcRange {
  char32_t first, last;
};

#include "runtime/text/utf8_nfc_data.inc"

// Hangul syllable arithmetic (Unicode chapter 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// Code points at or above this may need work; below it everything is stable.
constexpr char32_t kFirstUnsafe = 0x300;

template <typename Range>
const Range* find_range(const Range* begin, const Range* end, char32_t cp) {
  auto it = std::upper_bound(begin, end, cp,
                             [](char32_t v, const Range& r) { return v < r.first; });
  if (it == begin) return nullptr;
  --it;
  return cp <= it->last ? it : nullptr;
}

bool is_unsafe(char32_t cp) {
  if (cp < kFirstUnsafe) return false;
  return find_range(std::begin(kUnsafeRanges), std::end(kUnsafeRanges), cp) != nullptr;
}

uint8_t combining_class(char32_t cp) {
  if (cp < kFirstUnsafe) return 0;
  const NfcCccRange* r = find_range(std::begin(kCccRanges), std::end(kCccRanges), cp);
  return r ? r->ccc : 0;
}

void decompose(char32_t cp, std::vector<char32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), cp,
                             [](const NfcDecomposition& d, char32_t v) { return d.cp < v; });
  if (it == std::end(kDecompositions) || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  decompose(it->first, out);
  if (it->second != 0) decompose(it->second, out);
}

// Stable sort of each run of non-starters by combining class.
void canonical_order(std::vector<char32_t>& cps) {
  size_t i = 0;
  while (i < cps.size()) {
    if (combining_class(cps[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < cps.size() && combining_class(cps[j]) != 0) ++j;
    std::stable_sort(cps.begin() + i, cps.begin() + j, [](char32_t a, char32_t b) {
      return combining_class(a) < combining_class(b);
    });
    i = j;
  }
}

char32_t compose_pair(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  auto it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions),
                             NfcComposition{a, b, 0}, [](const NfcComposition& x, const NfcComposition& y) {
                               return x.first != y.first ? x.first < y.first : x.second < y.second;
                             });
  if (it == std::end(kCompositions) || it->first != a || it->second != b) return 0;
  return it->composite;
}

// Canonical composition: a character joins the last starter unless a
// character of the same or higher combining class stands between them.
void compose(std::vector<char32_t>& cps) {
  if (cps.empty()) return;
  size_t starter = 0;
  bool have_starter = combining_class(cps[0]) == 0;
  int last_class = have_starter ? 0 : 256;
  size_t out = 1;
  for (size_t i = 1; i < cps.size(); ++i) {
    char32_t ch = cps[i];
    int ch_class = combining_class(ch);
    if (have_starter && (last_class < ch_class || last_class == 0)) {
      if (char32_t composite = compose_pair(cps[starter], ch)) {
        cps[starter] = composite;
        continue;
      }
    }
    if (ch_class == 0) {
      starter = out;
      have_starter = true;
    }
    last_class = ch_class;
    cps[out++] = ch;
  }
  cps.resize(out);
}

}  // namespace

std::string utf8_nfc(std::string_view text) {
  size_t pos = 0;
  char32_t cp;
  bool needs_work = false;
  while (pos < text.size()) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (!utf8_next(text, pos, cp)) return std::string(text);  // contract: valid input
    if (is_unsafe(cp)) {
      needs_work = true;
      break;
    }
  }
  if (!needs_work) return std::string(text);

  std::vector<char32_t> cps;
  cps.reserve(text.size());
  pos = 0;
  while (pos < text.size() && utf8_next(text, pos, cp)) decompose(cp, cps);
  canonical_order(cps);
  compose(cps);
  std::string out;
  out.reserve(text.size());
  for (char32_t c : cps) utf8_append(out, c);
  return out;
}

}  // namespace ft
