// Structured outputs (response_format {"type": "json_schema"}): the answer is
// held to a JSON Schema the way JSON mode holds it to an object
// (json_constraint.h), by a recognizer that follows the schema.
//
// The subset, which covers what OpenAI's strict mode and pydantic emit:
//   type: object (properties, required; no other keys: additionalProperties
//     is taken as false; properties come in the schema's order, optional
//     ones may be left out), array (items, minItems, maxItems), string
//     (minLength, maxLength), integer and number (minimum, maximum,
//     exclusiveMinimum, exclusiveMaximum; a number with a range is written
//     without an exponent), boolean, null, or a list of types;
//   enum and const (any JSON values); anyOf / oneOf whose alternatives open
//     with different characters (a string or null, an object or null, ...),
//     or are objects that begin with the same required property holding
//     different constants (a discriminated union: {"type": "cat", ...} or
//     {"type": "dog", ...}; a forced tool call's name and its arguments);
//   $ref to "#", "#/$defs/NAME" or "#/definitions/NAME" (recursion included);
//   {} or true: any JSON value.
// Annotations (title, description, default, examples, format, $schema,
// $id, $comment, strict) are ignored; any other keyword (pattern,
// multipleOf, uniqueItems, allOf, not, patternProperties, ...) is refused
// with a message naming it, not silently dropped. Length and range keywords are ignored
// beside a type they do not apply to (minLength on an integer), as JSON
// Schema has it, and refused with no type at all.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/engine/json_constraint.h"

namespace ft {

class JsonSchema {
 public:
  static Result<std::shared_ptr<const JsonSchema>> compile(std::string_view schema_json);

  // kAny: any JSON value; kAnyObject: any object ({"type": "object"} without properties).
  enum class Kind : uint8_t { kAny, kAnyObject, kObject, kArray, kString, kInteger, kNumber, kLiterals, kAnyOf };
  struct Property {
    std::string key;  // its JSON text, quotes included
    int node = 0;
    bool required = false;
  };
  struct Node {
    Kind kind = Kind::kAny;
    std::vector<Property> properties;  // kObject, in order
    // kObject: for each next property index i, the keys that may come there
    // (i up to the first required one), sorted, as (key text, property index).
    std::vector<std::vector<std::pair<std::string, int>>> keys_from;
    // kObject, a discriminated union: properties[0] holds literals, and
    // once literal i of them is read the object goes on as node branch[i]
    // (from its property 1).
    std::vector<uint16_t> branch;
    int items = -1;                       // kArray: the items' node
    // kArray: minItems, maxItems; kString: minLength, maxLength, in characters
    // (code points; an escape is one, so an escaped surrogate pair is two). -1: no limit.
    int min_count = 0, max_count = -1;
    // kInteger: the least and most value (minimum, maximum and the exclusive
    // forms, as inclusive bounds); ranged: either was given.
    int64_t min_value = INT64_MIN, max_value = INT64_MAX;
    // kNumber: the least and most double a value may parse to (the exclusive
    // forms as the neighbouring double); ranged: either was given. A ranged
    // number is written without an exponent, in at most 19 significant digits.
    double min_number = -std::numeric_limits<double>::infinity(), max_number = std::numeric_limits<double>::infinity();
    bool ranged = false;
    std::vector<std::string> literals;    // kLiterals: JSON texts, sorted
    int alternative[256] = {};            // kAnyOf: per first byte, node + 1 (0: none)
  };

  const Node& node(int i) const { return nodes_[i]; }
  int size() const { return static_cast<int>(nodes_.size()); }

 private:
  friend class SchemaCompiler;
  std::vector<Node> nodes_;  // nodes_[0] is the root
};

// Where the answer stands in the schema: a stack of frames, one per value
// being read.
struct SchemaState {
  static constexpr int kMaxFrames = 16;
  struct Frame {
    JsonState value;   // kAny / kString / kInteger / kNumber: the value's bytes
    uint16_t node = 0;
    uint8_t phase = 0;
    uint8_t unused = 0;
    uint16_t index = 0;  // kObject: the next property that may come; kArray: items begun; kString: characters
    // Literal matching: candidates [lo, hi), bytes matched; a ranged integer:
    // lo = 1 after a minus sign, pos digits read; a ranged number: lo bit 0
    // after a minus sign, bit 1 after the point, hi digits before the point,
    // index after it, pos significant digits (from the first nonzero one).
    uint16_t lo = 0, hi = 0, pos = 0;
    uint64_t magnitude = 0;            // a ranged integer or number: its (significant) digits so far
                                       // (an integer's saturated above 10^19)
    bool operator==(const Frame&) const = default;
  };

  const JsonSchema* schema = nullptr;
  uint8_t depth = 0;
  bool done = false;
  Frame frames[kMaxFrames];

  explicit SchemaState(const JsonSchema* s = nullptr);
  bool feed(uint8_t c);
  bool complete() const { return done; }
  bool operator==(const SchemaState& o) const;
};

StringSpot string_spot(const SchemaState& s);
int string_room(const SchemaState& s);

std::unique_ptr<TokenConstraint> json_schema_constraint(std::shared_ptr<const TokenTrie> trie,
                                                        std::shared_ptr<const JsonSchema> schema);

}  // namespace ft
