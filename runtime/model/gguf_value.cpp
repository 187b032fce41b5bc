#include "runtime/model/gguf_value.h"

#include <fmt/format.h>

#include <limits>

namespace ft {

namespace {

std::string quote(const std::string& s, size_t max_chars = 80) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < max_chars; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (s.size() > max_chars) out += "...";
  return out + "\"";
}

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kUint8: return "u8";
    case GgufType::kInt8: return "i8";
    case GgufType::kUint16: return "u16";
    case GgufType::kInt16: return "i16";
    case GgufType::kUint32: return "u32";
    case GgufType::kInt32: return "i32";
    case GgufType::kFloat32: return "f32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kUint64: return "u64";
    case GgufType::kInt64: return "i64";
    case GgufType::kFloat64: return "f64";
  }
  return "?";
}

bool gguf_type_valid(uint32_t id) { return id <= static_cast<uint32_t>(GgufType::kFloat64); }

size_t GgufArray::size() const {
  return std::visit([](const auto& v) { return v.size(); }, items);
}

GgufValue GgufValue::strings(std::vector<std::string> v) {
  return GgufValue(GgufArray{GgufType::kString, std::move(v)});
}
GgufValue GgufValue::i32s(std::vector<int32_t> v) { return GgufValue(GgufArray{GgufType::kInt32, std::move(v)}); }
GgufValue GgufValue::f32s(std::vector<float> v) { return GgufValue(GgufArray{GgufType::kFloat32, std::move(v)}); }

const GgufArray* GgufValue::array() const {
  const auto* p = std::get_if<std::shared_ptr<const GgufArray>>(&data_);
  return p ? p->get() : nullptr;
}

Result<int64_t> GgufValue::to_int() const {
  return std::visit(
      [this](const auto& v) -> Result<int64_t> {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
          if constexpr (std::is_same_v<V, uint64_t>) {
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
              return FT_ERROR(ErrorCode::kCorrupt, "value {} does not fit in i64", v);
          }
          return static_cast<int64_t>(v);
        } else {
          return FT_ERROR(ErrorCode::kCorrupt, "value has type {}, expected an integer", gguf_type_name(type()));
        }
      },
      data_);
}

Result<uint64_t> GgufValue::to_uint() const {
  if (const auto* u = get_if<uint64_t>()) return *u;
  FT_ASSIGN_OR_RETURN(int64_t v, to_int());
  if (v < 0) return FT_ERROR(ErrorCode::kCorrupt, "value {} is negative, expected an unsigned integer", v);
  return static_cast<uint64_t>(v);
}

Result<double> GgufValue::to_float() const {
  if (const auto* f = get_if<float>()) return static_cast<double>(*f);
  if (const auto* d = get_if<double>()) return *d;
  return FT_ERROR(ErrorCode::kCorrupt, "value has type {}, expected a float", gguf_type_name(type()));
}

std::string GgufValue::to_string(size_t max_items) const {
  if (const auto* s = get_if<std::string>()) return quote(*s);
  if (const auto* b = get_if<bool>()) return *b ? "true" : "false";
  if (const auto* f = get_if<float>()) return fmt::format("{}", *f);
  if (const auto* d = get_if<double>()) return fmt::format("{}", *d);
  if (const GgufArray* a = array()) {
    std::string out = fmt::format("[{} x {}]", a->size(), gguf_type_name(a->elem_type));
    std::visit(
        [&](const auto& items) {
          using E = typename std::decay_t<decltype(items)>::value_type;
          for (size_t i = 0; i < items.size() && i < max_items; ++i) {
            out += i == 0 ? " " : ", ";
            if constexpr (std::is_same_v<E, std::string>) out += quote(items[i], 40);
            else if constexpr (std::is_same_v<E, GgufValue>) out += items[i].to_string(max_items);
            else if constexpr (std::is_same_v<E, uint8_t> || std::is_same_v<E, int8_t>)
              out += fmt::format("{}", static_cast<int>(items[i]));
            else out += fmt::format("{}", items[i]);
          }
          if (items.size() > max_items) out += ", ...";
        },
        a->items);
    return out;
  }
  // u64 above INT64_MAX fits only the unsigned form; the fuzzer found that.
  if (auto u = to_uint(); u.ok()) return fmt::format("{}", *u);
  if (auto i = to_int(); i.ok()) return fmt::format("{}", *i);
  return std::string(gguf_type_name(type()));
}

}  // namespace ft
