// The byte format between the compile service and its workers: a frame is a
// u32 length and a payload of u32 integers and length-prefixed strings. Both
// ends are the same build, so there is no versioning; the reader still checks
// every length, since a dying worker can leave a short frame.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "runtime/base/status.h"

namespace ft::wire {

// Frames larger than this are refused: nothing ft compiles comes close.
inline constexpr uint32_t kMaxFrameBytes = 512u << 20;

class Writer {
 public:
  void u32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  // The payload with its length prefix, ready to send.
  std::string frame() const {
    std::string f(sizeof(uint32_t), '\0');
    uint32_t n = static_cast<uint32_t>(out_.size());
    f.replace(0, sizeof n, reinterpret_cast<const char*>(&n), sizeof n);
    return f + out_;
  }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view payload) : in_(payload) {}
  Result<uint32_t> u32() {
    if (in_.size() - pos_ < sizeof(uint32_t)) return FT_ERROR(ErrorCode::kCorrupt, "short worker message");
    uint32_t v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  Result<std::string> str() {
    FT_ASSIGN_OR_RETURN(uint32_t n, u32());
    if (in_.size() - pos_ < n) return FT_ERROR(ErrorCode::kCorrupt, "short worker message");
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace ft::wire
