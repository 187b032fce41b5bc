// GGUF metadata values: one owning type shared by the reader and the writer.
//
// A scalar is held in a variant whose index equals its GGUF type id. Arrays
// keep their elements in one typed vector (a 150k-token vocabulary is one
// std::vector<std::string>, numeric arrays stay packed); nested arrays hold
// GgufValues.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

enum class GgufType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};

std::string_view gguf_type_name(GgufType type);
bool gguf_type_valid(uint32_t id);

class GgufValue;

struct GgufArray {
  // Bool elements are stored as uint8_t (0 or 1); nested arrays as GgufValue.
  using Items = std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
                             std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
                             std::vector<float>, std::vector<uint64_t>, std::vector<int64_t>,
                             std::vector<double>, std::vector<std::string>, std::vector<GgufValue>>;
  GgufType elem_type = GgufType::kUint8;
  Items items;

  size_t size() const;
  // The element vector when its C++ type is T, else nullptr.
  template <typename T>
  const std::vector<T>* as() const { return std::get_if<std::vector<T>>(&items); }
};

class GgufValue {
 public:
  GgufValue() : data_(uint8_t{0}) {}
  explicit GgufValue(uint8_t v) : data_(v) {}
  explicit GgufValue(int8_t v) : data_(v) {}
  explicit GgufValue(uint16_t v) : data_(v) {}
  explicit GgufValue(int16_t v) : data_(v) {}
  explicit GgufValue(uint32_t v) : data_(v) {}
  explicit GgufValue(int32_t v) : data_(v) {}
  explicit GgufValue(float v) : data_(v) {}
  explicit GgufValue(bool v) : data_(v) {}
  explicit GgufValue(std::string v) : data_(std::move(v)) {}
  explicit GgufValue(const char* v) : data_(std::string(v)) {}
  explicit GgufValue(GgufArray v) : data_(std::make_shared<const GgufArray>(std::move(v))) {}
  explicit GgufValue(uint64_t v) : data_(v) {}
  explicit GgufValue(int64_t v) : data_(v) {}
  explicit GgufValue(double v) : data_(v) {}

  static GgufValue strings(std::vector<std::string> v);
  static GgufValue i32s(std::vector<int32_t> v);
  static GgufValue f32s(std::vector<float> v);

  GgufType type() const { return static_cast<GgufType>(data_.index()); }

  template <typename T>
  const T* get_if() const { return std::get_if<T>(&data_); }
  const GgufArray* array() const;

  // Any integer type, checked to fit; kCorrupt naming the type otherwise.
  Result<int64_t> to_int() const;
  Result<uint64_t> to_uint() const;
  // f32 or f64.
  Result<double> to_float() const;

  // Human-readable form; arrays show their type, length and the first
  // `max_items` elements.
  std::string to_string(size_t max_items = 8) const;

 private:
  std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
               std::shared_ptr<const GgufArray>, uint64_t, int64_t, double>
      data_;
};

}  // namespace ft
