#include "runtime/engine/json_schema.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ft {

using ojson = nlohmann::ordered_json;
using Kind = JsonSchema::Kind;

namespace {

const std::set<std::string, std::less<>> kAnnotations = {
    "title", "description", "default", "examples", "format", "$schema", "$id", "$comment", "strict", "readOnly",
    "writeOnly", "deprecated"};
const std::set<std::string, std::less<>> kUnderstood = {
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minLength",
    "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "const", "anyOf", "oneOf",
    "$ref", "$defs", "definitions"};
const char* const kRangeKeys[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};

constexpr int kMaxWhitespace = JsonState::kMaxWhitespace;
constexpr int kMaxCount = 65535;  // a frame counts an array's items or a string's characters in 16 bits

// Matching a frame against sorted texts (literals, or an object's keys): the
// candidates [lo, hi) share their first `pos` bytes; those whose next byte is
// c (together, as the texts are sorted) become the range and pos moves on.
// False, with the frame unchanged, when no candidate goes on with c.
template <typename TextOf>
bool narrow(SchemaState::Frame& f, uint8_t c, TextOf text_of) {
  uint16_t lo = f.hi, hi = f.hi;
  for (uint16_t i = f.lo; i < f.hi; ++i) {
    const std::string& t = text_of(i);
    if (t.size() > f.pos && static_cast<uint8_t>(t[f.pos]) == c) {
      lo = std::min(lo, i);
      hi = static_cast<uint16_t>(i + 1);
    }
  }
  if (lo == hi) return false;
  f.lo = lo;
  f.hi = hi;
  ++f.pos;
  return true;
}


}  // namespace

// Turns the schema's JSON into nodes; $refs resolve to the node their target
// compiled to (reserved first, so a schema may refer to itself).
class SchemaCompiler {
 public:
  explicit SchemaCompiler(ojson root) : root_(std::move(root)) {}

  Result<std::shared_ptr<const JsonSchema>> run() {
    out_.nodes_.emplace_back();  // the root's place
    FT_RETURN_IF_ERROR(compile_into(0, root_, "schema"));
    for (int i = 0; i < static_cast<int>(out_.nodes_.size()); ++i)
      if (out_.nodes_[i].kind == Kind::kAnyOf) FT_RETURN_IF_ERROR(build_alternatives(i));
    return std::make_shared<const JsonSchema>(std::move(out_));
  }

 private:
  int add() {
    out_.nodes_.emplace_back();
    return static_cast<int>(out_.nodes_.size()) - 1;
  }

  Result<int> compile(const ojson& s, const std::string& where) {
    if (s.is_object()) {
      if (auto ref = s.find("$ref"); ref != s.end()) {
        for (const auto& [key, value] : s.items())
          if (key != "$ref" && key != "$defs" && key != "definitions" && !kAnnotations.count(key))
            return FT_ERROR(ErrorCode::kUnsupported, "{}: '{}' beside '$ref' is not supported", where, key);
        if (!ref->is_string()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: '$ref' must be a string", where);
        return resolve(ref->get<std::string>(), where);
      }
    }
    const int id = add();
    FT_RETURN_IF_ERROR(compile_into(id, s, where));
    return id;
  }

  Result<int> resolve(const std::string& ref, const std::string& where) {
    if (auto it = refs_.find(ref); it != refs_.end()) return it->second;
    if (ref == "#") return 0;
    const ojson* target = nullptr;
    for (const char* base : {"#/$defs/", "#/definitions/"}) {
      if (ref.rfind(base, 0) != 0) continue;
      std::string name = ref.substr(std::strlen(base));
      for (size_t at; (at = name.find("~1")) != std::string::npos;) name.replace(at, 2, "/");
      for (size_t at; (at = name.find("~0")) != std::string::npos;) name.replace(at, 2, "~");
      auto defs = root_.find(std::string(base).substr(2, std::strlen(base) - 3));  // "$defs" / "definitions"
      if (defs != root_.end() && defs->is_object()) {
        auto it = defs->find(name);
        if (it != defs->end()) target = &*it;
      }
    }
    if (!target)
      return FT_ERROR(ErrorCode::kUnsupported, "{}: '$ref' {} does not name a definition of this schema", where, ref);
    const int id = add();
    refs_[ref] = id;
    FT_RETURN_IF_ERROR(compile_into(id, *target, ref));
    return id;
  }

  // A minimum and maximum count (minItems/maxItems, minLength/maxLength)
  // into n.min_count and n.max_count: non-negative integers, the least at
  // most the most and below kMaxCount.
  static Status counts(const ojson& s, const char* min_key, const char* max_key, const std::string& where,
                       JsonSchema::Node& n) {
    for (const char* key : {min_key, max_key}) {
      if (!s.contains(key)) continue;
      const ojson& v = s[key];
      if (!v.is_number_integer() || v.get<int64_t>() < 0)
        return FT_ERROR(ErrorCode::kInvalidArgument, "{}: '{}' must be a non-negative integer", where, key);
      const int count = static_cast<int>(std::min<int64_t>(v.get<int64_t>(), kMaxCount));
      (key == min_key ? n.min_count : n.max_count) = count;
    }
    if (n.max_count >= 0 && n.min_count > n.max_count)
      return FT_ERROR(ErrorCode::kUnsupported, "{}: {} {} above {} {} matches nothing", where, min_key, n.min_count,
                      max_key, n.max_count);
    if (n.min_count >= kMaxCount)
      return FT_ERROR(ErrorCode::kUnsupported, "{}: {} of {} or more is not supported", where, min_key, kMaxCount);
    return Status();
  }

  // Each bound of a range given (minimum, maximum, exclusiveMinimum,
  // exclusiveMaximum: any finite JSON number) to take(value, lower,
  // exclusive); n.ranged set where any was.
  template <typename Take>
  static Status bounds(const ojson& s, const std::string& where, JsonSchema::Node& n, Take take) {
    for (const char* key : kRangeKeys) {
      if (!s.contains(key)) continue;
      const ojson& v = s[key];
      if (!v.is_number()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: '{}' must be a number", where, key);
      if (v.is_number_float() && !std::isfinite(v.get<double>()))
        return FT_ERROR(ErrorCode::kInvalidArgument, "{}: '{}' must be finite", where, key);
      const std::string_view k = key;
      take(v, k == "minimum" || k == "exclusiveMinimum", k.starts_with("exclusive"));
      n.ranged = true;
    }
    return Status();
  }

  // An integer's range as inclusive bounds in n.min_value and n.max_value.
  static Status range(const ojson& s, const std::string& where, JsonSchema::Node& n) {
    FT_RETURN_IF_ERROR(bounds(s, where, n, [&](const ojson& v, bool lower, bool exclusive) {
      // The integer bound: the least integer at or above (or above) a lower
      // bound, the most at or below (or below) an upper one.
      long double b = v.is_number_integer() ? (v.is_number_unsigned() ? static_cast<long double>(v.get<uint64_t>())
                                                                       : static_cast<long double>(v.get<int64_t>()))
                                            : static_cast<long double>(v.get<double>());
      b = lower ? (exclusive ? std::floor(b) + 1 : std::ceil(b)) : (exclusive ? std::ceil(b) - 1 : std::floor(b));
      const long double lo = static_cast<long double>(INT64_MIN), hi = static_cast<long double>(INT64_MAX);
      const int64_t bound = b <= lo ? INT64_MIN : b >= hi ? INT64_MAX : static_cast<int64_t>(b);
      if (lower) n.min_value = std::max(n.min_value, bound);
      else n.max_value = std::min(n.max_value, bound);
    }));
    if (n.min_value > n.max_value)
      return FT_ERROR(ErrorCode::kUnsupported, "{}: no integer lies between {} and {}: the range matches nothing", where,
                      n.min_value, n.max_value);
    return Status();
  }

  // A number's range as inclusive bounds in n.min_number and n.max_number:
  // the doubles a value may parse to (an exclusive bound's neighbour, as a
  // validator compares the parsed double with the bound).
  static Status number_range(const ojson& s, const std::string& where, JsonSchema::Node& n) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    FT_RETURN_IF_ERROR(bounds(s, where, n, [&](const ojson& v, bool lower, bool exclusive) {
      double b = v.get<double>();
      if (exclusive) b = std::nextafter(b, lower ? kInf : -kInf);
      if (lower) n.min_number = std::max(n.min_number, b);
      else n.max_number = std::min(n.max_number, b);
    }));
    if (n.min_number > n.max_number)
      return FT_ERROR(ErrorCode::kUnsupported, "{}: no number lies in the range: it matches nothing", where);
    return Status();
  }

  Status compile_into(int id, const ojson& s, const std::string& where) {
    if (s.is_boolean()) {
      if (!s.get<bool>()) return FT_ERROR(ErrorCode::kUnsupported, "{}: the schema false matches nothing", where);
      return Status();  // kAny
    }
    if (!s.is_object()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: a schema must be an object", where);
    for (const auto& [key, value] : s.items())
      if (!kUnderstood.count(key) && !kAnnotations.count(key))
        return FT_ERROR(ErrorCode::kUnsupported, "{}: the keyword '{}' is not supported", where, key);
    if (s.contains("$ref")) {  // a $ref reached through compile_into (the root, or a definition)
      FT_ASSIGN_OR_RETURN(int target, compile(s, where));
      JsonSchema::Node copy = out_.nodes_[target];
      out_.nodes_[id] = std::move(copy);
      if (auto alts = alternatives_.find(target); alts != alternatives_.end()) {
        std::vector<int> same = alts->second;
        alternatives_[id] = std::move(same);
      }
      return Status();
    }
    JsonSchema::Node n;
    if (s.contains("enum") || s.contains("const")) {
      n.kind = Kind::kLiterals;
      if (s.contains("const")) n.literals.push_back(s["const"].dump());
      if (s.contains("enum")) {
        if (!s["enum"].is_array() || s["enum"].empty())
          return FT_ERROR(ErrorCode::kInvalidArgument, "{}: 'enum' must be a non-empty array", where);
        for (const ojson& v : s["enum"]) n.literals.push_back(v.dump(-1, ' ', false));
      }
      std::sort(n.literals.begin(), n.literals.end());
      n.literals.erase(std::unique(n.literals.begin(), n.literals.end()), n.literals.end());
      out_.nodes_[id] = std::move(n);
      return Status();
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      if (!s[key].is_array() || s[key].empty())
        return FT_ERROR(ErrorCode::kInvalidArgument, "{}: '{}' must be a non-empty array", where, key);
      for (const auto& [other, value] : s.items())
        if (other != key && other != "$defs" && other != "definitions" && !kAnnotations.count(other))
          return FT_ERROR(ErrorCode::kUnsupported, "{}: '{}' beside '{}' is not supported", where, other, key);
      n.kind = Kind::kAnyOf;
      std::vector<int> alts;
      for (size_t i = 0; i < s[key].size(); ++i) {
        FT_ASSIGN_OR_RETURN(int alt, compile(s[key][i], fmt::format("{}.{}[{}]", where, key, i)));
        alts.push_back(alt);
      }
      alternatives_[id] = std::move(alts);
      out_.nodes_[id] = std::move(n);
      return Status();
    }
    const ojson* type = s.contains("type") ? &s["type"] : nullptr;
    if (type && type->is_array()) {  // ["string", "null"]: one alternative per type
      std::vector<int> alts;
      for (const ojson& t : *type) {
        ojson one = s;
        one["type"] = t;
        FT_ASSIGN_OR_RETURN(int alt, compile(one, where));
        alts.push_back(alt);
      }
      n.kind = Kind::kAnyOf;
      alternatives_[id] = std::move(alts);
      out_.nodes_[id] = std::move(n);
      return Status();
    }
    std::string t = type && type->is_string() ? type->get<std::string>() : "";
    if (type && !type->is_string()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: 'type' must be a string or a list", where);
    if (t.empty()) t = s.contains("properties") ? "object" : s.contains("items") ? "array" : "";
    if (t.empty())
      for (const char* key : {"minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
                              "exclusiveMinimum", "exclusiveMaximum"})
        if (s.contains(key))
          return FT_ERROR(ErrorCode::kUnsupported, "{}: '{}' without a 'type' is not supported", where, key);
    if (t == "string") {
      n.kind = Kind::kString;
      FT_RETURN_IF_ERROR(counts(s, "minLength", "maxLength", where, n));
    } else if (t == "integer") {
      n.kind = Kind::kInteger;
      FT_RETURN_IF_ERROR(range(s, where, n));
    } else if (t == "number") {
      n.kind = Kind::kNumber;
      FT_RETURN_IF_ERROR(number_range(s, where, n));
    }
    else if (t == "boolean") n = literals({"false", "true"});
    else if (t == "null") n = literals({"null"});
    else if (t == "array") {
      n.kind = Kind::kArray;
      FT_RETURN_IF_ERROR(counts(s, "minItems", "maxItems", where, n));
      if (s.contains("items")) {
        FT_ASSIGN_OR_RETURN(n.items, compile(s["items"], where + ".items"));
      } else {
        n.items = add();  // any value
      }
    } else if (t == "object") {
      n.kind = Kind::kObject;
      if (auto extra = s.find("additionalProperties"); extra != s.end() && !(extra->is_boolean() && !extra->get<bool>()))
        return FT_ERROR(ErrorCode::kUnsupported, "{}: 'additionalProperties' other than false is not supported", where);
      std::set<std::string> required;
      if (s.contains("required")) {
        if (!s["required"].is_array()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: 'required' must be an array", where);
        for (const ojson& r : s["required"]) {
          if (!r.is_string()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: 'required' must list names", where);
          required.insert(r.get<std::string>());
        }
      }
      const ojson props = s.value("properties", ojson::object());
      if (!props.is_object()) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: 'properties' must be an object", where);
      for (const auto& [name, sub] : props.items()) {
        JsonSchema::Property p;
        p.key = ojson(name).dump(-1, ' ', false);
        p.required = required.erase(name) > 0;
        FT_ASSIGN_OR_RETURN(p.node, compile(sub, where + "." + name));
        n.properties.push_back(std::move(p));
      }
      if (!required.empty())
        return FT_ERROR(ErrorCode::kInvalidArgument, "{}: required property '{}' is not in 'properties'", where,
                        *required.begin());
      if (n.properties.empty()) {
        n.kind = Kind::kAnyObject;  // {"type": "object"}: any object
      } else {
        const int count = static_cast<int>(n.properties.size());
        n.keys_from.resize(count + 1);
        for (int i = 0; i <= count; ++i) {
          for (int j = i; j < count; ++j) {
            n.keys_from[i].emplace_back(n.properties[j].key, j);
            if (n.properties[j].required) break;
          }
          std::sort(n.keys_from[i].begin(), n.keys_from[i].end());
        }
      }
    } else if (!t.empty()) {
      return FT_ERROR(ErrorCode::kUnsupported, "{}: type '{}' is not a JSON Schema type", where, t);
    }
    out_.nodes_[id] = std::move(n);
    return Status();
  }

  static JsonSchema::Node literals(std::vector<std::string> texts) {
    JsonSchema::Node n;
    n.kind = Kind::kLiterals;
    n.literals = std::move(texts);
    return n;
  }

  // The bytes a value of node i can open with.
  void first_bytes(int i, std::array<bool, 256>& out, std::set<int>& seen) {
    if (!seen.insert(i).second) return;
    const JsonSchema::Node& n = out_.nodes_[i];
    auto add_chars = [&](std::string_view chars) {
      for (char c : chars) out[static_cast<uint8_t>(c)] = true;
    };
    switch (n.kind) {
      case Kind::kAny: add_chars("{[\"-0123456789tfn"); break;
      case Kind::kObject:
      case Kind::kAnyObject: add_chars("{"); break;
      case Kind::kArray: add_chars("["); break;
      case Kind::kString: add_chars("\""); break;
      case Kind::kInteger:
      case Kind::kNumber: add_chars("-0123456789"); break;
      case Kind::kLiterals:
        for (const std::string& l : n.literals) add_chars(l.substr(0, 1));
        break;
      case Kind::kAnyOf:
        for (int alt : alternatives_[i]) first_bytes(alt, out, seen);
        break;
    }
  }

  Status build_alternatives(int i) {
    // Alternatives that open with '{' go to one discriminated union when
    // there are several of them.
    std::vector<int> objects;
    std::vector<std::array<bool, 256>> opens;
    for (int alt : alternatives_[i]) {
      std::array<bool, 256> bytes{};
      std::set<int> seen;
      first_bytes(alt, bytes, seen);
      opens.push_back(bytes);
      if (bytes['{']) objects.push_back(alt);
    }
    constexpr const char* kRule =
        "anyOf/oneOf alternatives must open with different characters (a string or null, an object or null, ...), or "
        "be objects that begin with the same required property holding different constants";
    int union_node = -1;
    if (objects.size() > 1) {
      Result<int> u = discriminated_union(objects);
      if (!u.ok()) return FT_ERROR(ErrorCode::kUnsupported, "{}; {}", kRule, u.status().user_message());
      union_node = *u;
    }
    JsonSchema::Node& n = out_.nodes_[i];  // after discriminated_union(), which adds nodes
    for (size_t a = 0; a < alternatives_[i].size(); ++a) {
      const int alt = alternatives_[i][a];
      for (int c = 0; c < 256; ++c) {
        if (!opens[a][c]) continue;
        const int target = c == '{' && union_node >= 0 ? union_node : alt;
        if (n.alternative[c] != 0 && n.alternative[c] != target + 1)
          return FT_ERROR(ErrorCode::kUnsupported, "{}; two of them can open with '{}'", kRule, static_cast<char>(c));
        n.alternative[c] = target + 1;
      }
    }
    return Status();
  }

  // One object node for object alternatives that begin with the same
  // required property, each holding constants no other holds: it reads that
  // property and goes on as the alternative its value names.
  Result<int> discriminated_union(const std::vector<int>& objects) {
    std::string key;
    std::vector<std::pair<std::string, int>> tags;  // (literal, alternative)
    for (int alt : objects) {
      const JsonSchema::Node& n = out_.nodes_[alt];
      if (n.kind != Kind::kObject)
        return FT_ERROR(ErrorCode::kUnsupported, "two of them can open with '{{' and one is not an object with properties");
      const JsonSchema::Property& first = n.properties[0];
      if (!first.required || out_.nodes_[first.node].kind != Kind::kLiterals)
        return FT_ERROR(ErrorCode::kUnsupported, "the objects' first property {} is not a required const or enum",
                        first.key);
      if (key.empty()) key = first.key;
      if (first.key != key)
        return FT_ERROR(ErrorCode::kUnsupported, "the objects begin with different properties ({} and {})", key,
                        first.key);
      for (const std::string& l : out_.nodes_[first.node].literals) tags.emplace_back(l, alt);
    }
    std::sort(tags.begin(), tags.end());
    for (size_t t = 1; t < tags.size(); ++t)
      if (tags[t].first == tags[t - 1].first)
        return FT_ERROR(ErrorCode::kUnsupported, "two objects hold the same {} ({})", key, tags[t].first);
    if (out_.nodes_.size() + 2 > std::numeric_limits<uint16_t>::max())
      return FT_ERROR(ErrorCode::kUnsupported, "the schema has too many nodes");
    std::vector<std::string> texts;
    JsonSchema::Node u;
    u.kind = Kind::kObject;
    for (const auto& [text, alt] : tags) {
      texts.push_back(text);
      u.branch.push_back(static_cast<uint16_t>(alt));
    }
    const int tag_node = add();
    out_.nodes_[tag_node] = literals(std::move(texts));
    u.properties.push_back({key, tag_node, true});
    u.keys_from = {{{key, 0}}, {}};
    const int id = add();
    out_.nodes_[id] = std::move(u);
    return id;
  }

  ojson root_;
  JsonSchema out_;
  std::map<std::string, int> refs_;
  std::map<int, std::vector<int>> alternatives_;
};

Result<std::shared_ptr<const JsonSchema>> JsonSchema::compile(std::string_view schema_json) {
  ojson root = ojson::parse(schema_json, nullptr, false);
  if (root.is_discarded()) return FT_ERROR(ErrorCode::kInvalidArgument, "the schema is not valid JSON");
  return SchemaCompiler(std::move(root)).run();
}

namespace {

// Whether some integer that begins with the digits read so far (`digits` of
// them, `magnitude` their value, after a minus sign or not) lies in the
// node's range: the integer as it stands, or with j more digits, anywhere
// in [m 10^j, m 10^j + 10^j - 1]; after a leading zero none may follow.
// int64 values have at most 19 digits.
bool integer_reachable(const JsonSchema::Node& n, bool negative, uint64_t magnitude, int digits) {
  if (digits == 0) return !negative || n.min_value < 0;
  __int128 a = magnitude, b = magnitude;
  for (int j = 0; digits + j <= 19; ++j) {
    const __int128 lo = negative ? -b : a, hi = negative ? -a : b;
    if (hi >= n.min_value && lo <= n.max_value) return true;
    if (magnitude == 0) break;
    a *= 10;
    b = b * 10 + 9;
  }
  return false;
}

bool integer_in_range(const JsonSchema::Node& n, bool negative, uint64_t magnitude) {
  const __int128 v = negative ? -static_cast<__int128>(magnitude) : static_cast<__int128>(magnitude);
  return v >= n.min_value && v <= n.max_value;
}

// A ranged number's frame (SchemaState::Frame): its sign, point and digits.
constexpr uint16_t kNumNegative = 1, kNumPoint = 2;
constexpr int kMaxSignificant = 19;  // significant digits a ranged number may have (a double needs 17)

// The digits read so far without sign or point (leading zeros, then the
// significant digits), plus `up` in the last place; the point goes after
// the first `point` of them (the carry of `up` may add a digit in front).
std::string number_digits(const SchemaState::Frame& f, bool up, int& point) {
  const int total = f.hi + f.index;
  std::string sig = f.pos > 0 ? std::to_string(f.magnitude) : "";  // pos digits: the first is nonzero
  std::string d = std::string(static_cast<size_t>(total - static_cast<int>(sig.size())), '0') + sig;
  point = f.hi;
  if (up) {
    int i = total - 1;
    for (; i >= 0 && d[i] == '9'; --i) d[i] = '0';
    if (i >= 0) {
      ++d[i];
    } else {
      d.insert(d.begin(), '1');
      ++point;
    }
  }
  return d;
}

// The double a decimal text of `digits` (point after `point` of them, then
// `zeros` more zeros before it) parses to, as a validator reads it.
double parse_decimal(const std::string& digits, int point, int zeros) {
  std::string text = digits.substr(0, point) + std::string(static_cast<size_t>(zeros), '0');
  if (text.empty()) text = "0";
  if (point < static_cast<int>(digits.size())) text += "." + digits.substr(point);
  return std::strtod(text.c_str(), nullptr);
}

// Whether some number that begins with what the frame read (no exponent:
// a ranged number is written without one) parses into the node's range.
// In magnitude space (a minus sign mirrors the range), the digits so far
// reach [a, b): after the point, from the digits to the digits plus one in
// their last place; before it, that for each count of digits still to come
// (I, then I0-I9, ...; a lone 0 reaches [0, 1)).
bool number_reachable(const JsonSchema::Node& n, const SchemaState::Frame& f) {
  const bool negative = f.lo & kNumNegative;
  const double lo = negative ? -n.max_number : n.min_number, hi = negative ? -n.min_number : n.max_number;
  if (f.hi == 0) return hi >= 0;  // a sign at most: any magnitude
  const auto overlaps = [&](double a, double b) { return a < b ? a <= hi && b > lo : a >= lo && a <= hi; };
  int point = 0, up_point = 0;
  const std::string digits = number_digits(f, false, point), up = number_digits(f, true, up_point);
  if (f.lo & kNumPoint) return overlaps(parse_decimal(digits, point, 0), parse_decimal(up, up_point, 0));
  if (f.magnitude == 0) return overlaps(0, 1);  // a leading 0: no digit may follow it
  for (int zeros = 0; zeros <= 310; ++zeros) {
    const double a = parse_decimal(digits, point, zeros);
    if (a > hi) return false;
    if (overlaps(a, parse_decimal(up, up_point, zeros))) return true;
  }
  return false;
}

bool number_in_range(const JsonSchema::Node& n, const SchemaState::Frame& f) {
  int point = 0;
  const std::string digits = number_digits(f, false, point);  // sets point
  const double v = parse_decimal(digits, point, 0);
  const double x = (f.lo & kNumNegative) ? -v : v;
  return x >= n.min_number && x <= n.max_number;
}

}  // namespace

SchemaState::SchemaState(const JsonSchema* s) : schema(s) {
  if (s) depth = 1;  // the root value, not yet begun
}

bool SchemaState::operator==(const SchemaState& o) const {
  if (schema != o.schema || depth != o.depth || done != o.done) return false;
  for (int i = 0; i < depth; ++i)
    if (!(frames[i] == o.frames[i])) return false;
  return true;
}

bool SchemaState::feed(uint8_t c) {
  enum : uint8_t { kStart = 0 };
  // Object phases.
  enum : uint8_t { kObjOpen = 1, kObjKey, kObjColon, kObjAfter, kObjComma };
  // Array phases.
  enum : uint8_t { kArrOpen = 1, kArrAfter, kArrComma };
  auto pop = [&] {
    frames[--depth] = Frame{};
    if (depth == 0) done = true;
  };
  auto push = [&](int node) {
    if (depth >= kMaxFrames) return false;
    frames[depth] = Frame{};
    frames[depth].node = static_cast<uint16_t>(node);
    ++depth;
    return true;
  };
  // Whitespace between a container's tokens: 1 taken, -1 one too many, 0
  // not whitespace (the run's count starts again).
  auto space = [&](Frame& f) {
    if (!is_json_space(c)) {
      f.unused = 0;
      return 0;
    }
    return ++f.unused <= kMaxWhitespace ? 1 : -1;
  };

  while (true) {
    if (depth == 0) return false;  // the value is whole: nothing may follow
    Frame& f = frames[depth - 1];
    const JsonSchema::Node& n = schema->node(f.node);
    switch (n.kind) {
      case Kind::kAnyOf: {
        const int alt = n.alternative[c];
        if (alt == 0) return false;
        f.node = static_cast<uint16_t>(alt - 1);
        continue;
      }
      case Kind::kAny:
      case Kind::kAnyObject:
      case Kind::kString:
      case Kind::kInteger:
      case Kind::kNumber: {
        if (f.phase == kStart) {
          if (n.kind == Kind::kString && c != '"') return false;
          if ((n.kind == Kind::kInteger || n.kind == Kind::kNumber) && c != '-' && (c < '0' || c > '9')) return false;
          f.value = JsonState{};
          if (n.kind != Kind::kAnyObject) f.value.flags = JsonState::kAnyTop;
          if (n.kind == Kind::kInteger) f.value.flags |= JsonState::kIntegerOnly;
          f.phase = 1;
        }
        // A string with a length limit counts the bytes that begin a
        // character (a UTF-8 lead byte or an escape's backslash) between its
        // quotes: none past maxLength, no closing quote before minLength.
        const bool counted = n.kind == Kind::kString && (n.min_count > 0 || n.max_count >= 0) &&
                             f.value.mode == JsonState::kString && f.value.utf8_left == 0;
        if (counted && (c == '"' ? f.index < n.min_count : n.max_count >= 0 && f.index >= n.max_count)) return false;
        JsonState t = f.value;
        if (t.feed(c)) {
          // A ranged integer keeps its sign (lo) and digits (pos, magnitude);
          // a byte after which no integer of the range can be written is refused.
          if (n.kind == Kind::kInteger && n.ranged) {
            if (c == '-') {
              f.lo = 1;
            } else if (c >= '0' && c <= '9') {
              const uint64_t d = c - '0';
              f.magnitude = f.magnitude > (UINT64_MAX - d) / 10 ? UINT64_MAX : f.magnitude * 10 + d;
              if (f.pos < kMaxCount) ++f.pos;
            }
            if (!integer_reachable(n, f.lo != 0, f.magnitude, f.pos)) return false;
          }
          // A ranged number likewise, written without an exponent and in at
          // most kMaxSignificant significant digits (every double of the
          // range can be).
          if (n.kind == Kind::kNumber && n.ranged) {
            if (c == '-') {
              f.lo |= kNumNegative;
            } else if (c == '.') {
              f.lo |= kNumPoint;
            } else if (c >= '0' && c <= '9') {
              if (f.magnitude > 0 || c != '0') {
                if (f.pos >= kMaxSignificant) return false;
                f.magnitude = f.magnitude * 10 + static_cast<uint64_t>(c - '0');
                ++f.pos;
              }
              ++(f.lo & kNumPoint ? f.index : f.hi);
            } else {
              return false;  // an exponent
            }
            if (!number_reachable(n, f)) return false;
          }
          f.value = t;
          if (counted && c != '"' && f.index < kMaxCount) ++f.index;  // held at kMaxCount, above any minLength
          if (t.complete()) pop();
          return true;
        }
        if (!t.complete()) return false;
        if (n.kind == Kind::kInteger && n.ranged && !integer_in_range(n, f.lo != 0, f.magnitude)) return false;
        if (n.kind == Kind::kNumber && n.ranged && !number_in_range(n, f)) return false;
        pop();  // a number ended before this byte, which is its container's
        continue;
      }
      case Kind::kLiterals: {
        const auto& lits = n.literals;
        // The value of a discriminated union's first property: once literal
        // i is whole, the object goes on as the alternative it names.
        auto settle = [&](uint16_t i) {
          if (depth < 2) return;
          Frame& parent = frames[depth - 2];
          const JsonSchema::Node& p = schema->node(parent.node);
          if (!p.branch.empty() && p.properties[0].node == f.node) parent.node = p.branch[i];
        };
        if (f.phase == kStart) {
          f.phase = 1;
          f.lo = 0;
          f.hi = static_cast<uint16_t>(lits.size());
          f.pos = 0;
        }
        if (!narrow(f, c, [&](uint16_t i) -> const std::string& { return lits[i]; })) {
          // A candidate matched whole sorts first of those sharing its bytes:
          // e.g. 1 of [1, 12], ended before this byte.
          if (lits[f.lo].size() != f.pos) return false;
          settle(f.lo);
          pop();
          continue;
        }
        if (f.hi - f.lo == 1 && lits[f.lo].size() == f.pos) {  // whole, and nothing longer can follow
          settle(f.lo);
          pop();
        }
        return true;
      }
      case Kind::kObject: {
        const auto keys = [&]() -> const std::vector<std::pair<std::string, int>>& { return n.keys_from[f.index]; };
        const auto may_close = [&] {
          for (size_t i = f.index; i < n.properties.size(); ++i)
            if (n.properties[i].required) return false;
          return true;
        };
        switch (f.phase) {
          case kStart:
            if (c != '{') return false;
            f.phase = kObjOpen;
            return true;
          case kObjOpen:
          case kObjComma:
            if (int w = space(f)) return w > 0;
            if (c == '}' && f.phase == kObjOpen && may_close()) {
              pop();
              return true;
            }
            if (c != '"' || keys().empty()) return false;
            f.phase = kObjKey;
            f.lo = 0;
            f.hi = static_cast<uint16_t>(keys().size());
            f.pos = 1;
            return true;
          case kObjKey: {
            const auto& ks = keys();
            if (!narrow(f, c, [&](uint16_t i) -> const std::string& { return ks[i].first; })) return false;
            if (ks[f.lo].first.size() == f.pos) {  // the closing quote: one key matches (no key is a prefix of another)
              f.lo = static_cast<uint16_t>(ks[f.lo].second);  // the property
              f.phase = kObjColon;
            }
            return true;
          }
          case kObjColon:
            if (int w = space(f)) return w > 0;
            if (c != ':') return false;
            f.phase = kObjAfter;
            f.index = static_cast<uint16_t>(f.lo + 1);
            // The value: whitespace first is the object's, then the property's frame.
            f.pos = 1;  // waiting for the value to start
            return true;
          case kObjAfter:
            if (f.pos == 1) {  // the value has not started
              if (int w = space(f)) return w > 0;
              f.pos = 0;
              if (!push(n.properties[f.index - 1].node)) return false;
              continue;
            }
            if (int w = space(f)) return w > 0;
            if (c == ',' && f.index < n.properties.size()) {
              f.phase = kObjComma;
              return true;
            }
            if (c == '}' && may_close()) {
              pop();
              return true;
            }
            return false;
        }
        return false;
      }
      case Kind::kArray: {
        switch (f.phase) {
          case kStart:
            if (c != '[') return false;
            f.phase = kArrOpen;
            return true;
          case kArrOpen:
          case kArrComma:
            if (int w = space(f)) return w > 0;
            if (c == ']' && f.phase == kArrOpen && n.min_count == 0) {
              pop();
              return true;
            }
            if (n.max_count >= 0 && f.index >= n.max_count) return false;  // no room for an item
            if (f.index < kMaxCount) ++f.index;  // items begun
            f.phase = kArrAfter;
            if (!push(n.items)) return false;
            continue;
          case kArrAfter:
            if (int w = space(f)) return w > 0;
            if (c == ',' && (n.max_count < 0 || f.index < n.max_count)) {
              f.phase = kArrComma;
              return true;
            }
            if (c == ']' && f.index >= n.min_count) {
              pop();
              return true;
            }
            return false;
        }
        return false;
      }
    }
    return false;
  }
}

StringSpot string_spot(const SchemaState& s) {
  if (s.depth == 0) return StringSpot::kOutside;
  const SchemaState::Frame& f = s.frames[s.depth - 1];
  const Kind k = s.schema->node(f.node).kind;
  if (f.phase == 0 || (k != Kind::kString && k != Kind::kAny && k != Kind::kAnyObject)) return StringSpot::kOutside;
  return string_spot(f.value);
}

int string_room(const SchemaState& s) {
  if (s.depth == 0) return -1;
  const SchemaState::Frame& f = s.frames[s.depth - 1];
  const JsonSchema::Node& n = s.schema->node(f.node);
  if (n.kind != Kind::kString || n.max_count < 0 || f.phase == 0 || f.value.mode != JsonState::kString) return -1;
  return n.max_count - f.index;
}

namespace {

// Keeps the schema alive beside the recognizer that points into it.
class SchemaConstraint final : public TokenConstraint {
 public:
  SchemaConstraint(std::shared_ptr<const TokenTrie> trie, std::shared_ptr<const JsonSchema> schema)
      : schema_(std::move(schema)), inner_(std::move(trie), SchemaState(schema_.get())) {}
  std::span<const uint8_t> allowed() override { return inner_.allowed(); }
  bool accept(std::string_view bytes) override { return inner_.accept(bytes); }
  bool complete() const override { return inner_.complete(); }

 private:
  std::shared_ptr<const JsonSchema> schema_;
  RecognizerConstraint<SchemaState> inner_;
};

}  // namespace

std::unique_ptr<TokenConstraint> json_schema_constraint(std::shared_ptr<const TokenTrie> trie,
                                                        std::shared_ptr<const JsonSchema> schema) {
  return std::make_unique<SchemaConstraint>(std::move(trie), std::move(schema));
}

}  // namespace ft
