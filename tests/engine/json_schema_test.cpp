// Structured outputs: schemas compiled (and refused where outside the
// subset), the schema recognizer against valid and invalid texts, the trie's
// masks against checking every token, and random walks through the masks.
#include "runtime/engine/json_schema.h"

#include "tests/engine/constraint_test_vocab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace ft {
namespace {

std::shared_ptr<const JsonSchema> compile_ok(const std::string& schema) {
  Result<std::shared_ptr<const JsonSchema>> s = JsonSchema::compile(schema);
  EXPECT_TRUE(s.ok()) << schema << ": " << s.status().to_string();
  return s.ok() ? *s : nullptr;
}

// 1: a whole value of the schema; 0: the start of one; -1: neither.
int run(const JsonSchema& schema, std::string_view text) {
  SchemaState s(&schema);
  for (char c : text)
    if (s.complete() || !s.feed(static_cast<uint8_t>(c))) return -1;
  return s.complete() ? 1 : 0;
}

// Every proper prefix of `text` is the start of a value, and all of it one.
void expect_accepts(const JsonSchema& schema, const std::string& text) {
  EXPECT_EQ(run(schema, text), 1) << text;
  for (size_t n = 0; n < text.size(); ++n) ASSERT_EQ(run(schema, text.substr(0, n)), 0) << n << " bytes of " << text;
}

// Pydantic's shape: $defs, a nullable reference, an enum, a list.
constexpr const char* kPerson = R"({
  "title": "Person", "type": "object", "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "description": "full name"},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "color": {"enum": ["red", "green"]},
    "pet": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}], "default": null}
  },
  "required": ["name", "age", "tags", "color", "pet"],
  "$defs": {"Pet": {"type": "object", "properties": {"kind": {"type": "string"}, "legs": {"type": "number"},
                                                       "tame": {"type": ["boolean", "null"]}},
                    "required": ["kind"]}}
})";

TEST(JsonSchema, FollowsAPydanticSchema) {
  auto schema = compile_ok(kPerson);
  ASSERT_TRUE(schema);
  for (const char* ok : {
           R"({"name": "Ann", "age": 31, "tags": ["a", "b"], "color": "red", "pet": {"kind": "cat", "legs": 4.5, "tame": true}})",
           R"({"name":"B\"o\u00e9","age":-2,"tags":[],"color":"green","pet":null})",
           "{\n  \"name\": \"C\",\n  \"age\": 0,\n  \"tags\": [ \"x\" ],\n  \"color\": \"red\",\n  \"pet\": {\"kind\": \"dog\"}\n}",
           R"({"name": "D", "age": 1, "tags": [], "color": "red", "pet": {"kind": "fish", "tame": null}})",
       })
    expect_accepts(*schema, ok);
  for (const char* bad : {
           R"({"name": "Ann", "age": 3.5, "tags": [], "color": "red", "pet": null})",        // not an integer
           R"({"name": "Ann", "age": 3, "color": "red", "pet": null})",                      // a required key skipped
           R"({"age": 3, "name": "Ann", "tags": [], "color": "red", "pet": null})",          // out of order
           R"({"name": "Ann", "age": 3, "tags": [], "color": "blue", "pet": null})",         // not in the enum
           R"({"name": "Ann", "age": 3, "tags": [1], "color": "red", "pet": null})",         // items are strings
           R"({"name": "Ann", "age": 3, "tags": [], "color": "red", "pet": {"legs": 4}})",   // pet without kind
           R"({"name": "Ann", "age": 3, "tags": [], "color": "red", "pet": null, "x": 1})",  // no other keys
           R"({"name": "Ann", "age": 3, "tags": [], "color": "red", "pet": "cat"})",
           R"({"name": "Ann", "age": 3, "tags": [], "color": "red", "pet": null} )",         // nothing after it
           R"( {"name": "Ann"})",                                                            // nor before
           R"({"name": "Ann", "age": 3, "tags": [], "color": "red"})",
       })
    EXPECT_EQ(run(*schema, bad), -1) << bad;
}

TEST(JsonSchema, LiteralsRecursionAndTypeLists) {
  auto numbers = compile_ok(R"({"type": "array", "items": {"enum": [1, 12, "a", null, {"k": [true]}]}})");
  ASSERT_TRUE(numbers);
  expect_accepts(*numbers, R"([1, 12, 1,"a",null,{"k":[true]}])");
  EXPECT_EQ(run(*numbers, "[123]"), -1);
  EXPECT_EQ(run(*numbers, "[2]"), -1);

  auto tree = compile_ok(R"({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object",
      "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
      "required": ["v", "kids"]}}})");
  ASSERT_TRUE(tree);
  expect_accepts(*tree, R"({"v": 1, "kids": [{"v": 2, "kids": []}, {"v": 3, "kids": [{"v": 4, "kids": []}]}]})");
  EXPECT_EQ(run(*tree, R"({"v": 1, "kids": [{"v": 2}]})"), -1);

  auto optional = compile_ok(R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"},
      "c": {"type": "boolean"}}, "required": ["c"]})");
  ASSERT_TRUE(optional);
  for (const char* ok : {R"({"c": true})", R"({"a": "x", "c": false})", R"({"b": 2, "c": true})", R"({"a": "", "b": 0, "c": true})"})
    expect_accepts(*optional, ok);
  EXPECT_EQ(run(*optional, R"({"a": "x"})"), -1);

  auto any = compile_ok(R"({"type": "object", "properties": {"extra": {}, "obj": {"type": "object"}},
      "required": ["extra", "obj"]})");
  ASSERT_TRUE(any);
  expect_accepts(*any, R"({"extra": [1, {"x": null}], "obj": {"free": "form"}})");
  EXPECT_EQ(run(*any, R"({"extra": 1, "obj": [1]})"), -1);
}

// Objects that begin with the same required property holding different
// constants: the constant picks the alternative the rest must follow.
constexpr const char* kPets = R"({"anyOf": [
    {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}}, "required": ["kind", "lives"]},
    {"type": "object", "properties": {"kind": {"enum": ["dog", "wolf"]}, "bark": {"type": "boolean"}}, "required": ["kind"]},
    {"type": "null"}]})";

TEST(JsonSchema, DiscriminatedUnions) {
  auto pets = compile_ok(kPets);
  ASSERT_TRUE(pets);
  for (const char* ok : {R"({"kind": "cat", "lives": 9})", R"({"kind":"dog","bark":true})", R"({"kind": "wolf"})",
                         R"({ "kind" : "wolf" , "bark" : false })", "null"})
    expect_accepts(*pets, ok);
  for (const char* bad : {R"({"kind": "cat", "bark": true})", R"({"kind": "dog", "lives": 9})", R"({"kind": "cat"})",
                          R"({"lives": 9, "kind": "cat"})", R"({"kind": "cow"})", R"({"kind": "cats", "lives": 1})"})
    EXPECT_EQ(run(*pets, bad), -1) << bad;

  // Nested in an array, and numbers as the constants (1 is a prefix of 12).
  auto shapes = compile_ok(R"({"type": "array", "items": {"oneOf": [
      {"type": "object", "properties": {"v": {"const": 1}, "r": {"type": "number"}}, "required": ["v", "r"]},
      {"type": "object", "properties": {"v": {"const": 12}, "s": {"type": "string"}}, "required": ["v", "s"]}]}})");
  ASSERT_TRUE(shapes);
  expect_accepts(*shapes, R"([{"v": 1, "r": 2.5}, {"v": 12, "s": "x"}, {"v":1,"r":0}])");
  EXPECT_EQ(run(*shapes, R"([{"v": 1, "s": "x"}])"), -1);
  EXPECT_EQ(run(*shapes, R"([{"v": 12, "r": 1}])"), -1);

  SchemaState state(pets.get());
  const std::string prefix = R"({"kind": "dog", )";
  for (char c : prefix) ASSERT_TRUE(state.feed(static_cast<uint8_t>(c)));
  expect_trie_mask_exact(state, prefix.c_str());

  struct Case {
    const char* schema;
    const char* fragment;
  } refused[] = {
      {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
                     {"type": "object", "properties": {"k": {"enum": ["b", "a"]}}, "required": ["k"]}]})",
       "hold the same"},
      {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
                     {"type": "object", "properties": {"j": {"const": "b"}}, "required": ["j"]}]})",
       "begin with different properties"},
      {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": "a"}}},
                     {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]}]})",
       "not a required const"},
  };
  for (const Case& c : refused) {
    Result<std::shared_ptr<const JsonSchema>> s = JsonSchema::compile(c.schema);
    ASSERT_FALSE(s.ok()) << c.schema;
    EXPECT_NE(s.status().message().find(c.fragment), std::string::npos) << c.schema << " -> " << s.status().message();
    // What a client is shown names no source file (the inner error's " [file:line]" is not kept).
    EXPECT_EQ(s.status().user_message().find(".cpp:"), std::string::npos) << s.status().user_message();
  }
}

TEST(JsonSchema, ArrayLengths) {
  auto some = compile_ok(R"({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3})");
  ASSERT_TRUE(some);
  for (const char* ok : {"[1]", "[1, 2]", "[ 1 ,2,3 ]"}) expect_accepts(*some, ok);
  for (const char* bad : {"[]", "[1, 2, 3, 4]", "[1, 2, 3,", "[ ]"}) EXPECT_EQ(run(*some, bad), -1) << bad;
  auto none = compile_ok(R"({"type": "array", "maxItems": 0})");
  ASSERT_TRUE(none);
  expect_accepts(*none, "[]");
  EXPECT_EQ(run(*none, "[1]"), -1);
  // The mask at a full array allows no comma, only the end (or whitespace).
  SchemaState full(some.get());
  for (char c : std::string("[1, 2, 3")) ASSERT_TRUE(full.feed(static_cast<uint8_t>(c)));
  expect_trie_mask_exact(full, "[1, 2, 3");
  SchemaState after(full);
  EXPECT_FALSE(after.feed(','));
  EXPECT_TRUE(full.feed(']'));
  EXPECT_TRUE(full.complete());
  for (const char* bad : {R"({"type": "array", "minItems": 2, "maxItems": 1})", R"({"type": "array", "minItems": -1})",
                          R"({"type": "array", "maxItems": "3"})"})
    EXPECT_FALSE(JsonSchema::compile(bad).ok()) << bad;
}

// pydantic's constr(min_length=2, max_length=5): characters, not bytes; an
// escape is one character.
TEST(JsonSchema, StringLengths) {
  auto name = compile_ok(R"({"type": "object", "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 5}},
                             "required": ["name"]})");
  ASSERT_TRUE(name);
  for (const char* ok : {R"({"name": "ab"})", R"({"name": "abcde"})", R"({"name": "\u00e9\n"})",
                         "{\"name\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "ab\"}"})  // é € 😀 a b: 5 characters, 11 bytes
    expect_accepts(*name, ok);
  for (const char* bad : {R"({"name": "a"})", R"({"name": ""})", R"({"name": "abcdef"})", R"({"name": "abcde\n"})",
                          "{\"name\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "abc\""})
    EXPECT_EQ(run(*name, bad), -1) << bad;
  // The masks: at room for 5, 2, 0 more characters, and mid-escape, equal to
  // checking every token (plain tokens longer than the room are out; the
  // closing quote is out before the least).
  for (const char* prefix : {R"({"name": ")", R"({"name": "abc)", R"({"name": "abcde)", R"({"name": "a)",
                             R"({"name": "ab\)"}) {
    SchemaState state(name.get());
    for (const char* c = prefix; *c; ++c) ASSERT_TRUE(state.feed(static_cast<uint8_t>(*c))) << prefix;
    expect_trie_mask_exact(state, prefix);
  }
  // The count stops at 65535, above any minLength, so a longer string still
  // meets one; a maxLength above it is held to 65535 characters.
  const auto quoted = [](size_t n, bool close) {
    std::string text(n + 2, 'a');
    text.front() = '"';
    if (close) text.back() = '"';
    else text.pop_back();
    return text;
  };
  auto least = compile_ok(R"({"type": "string", "minLength": 2})");
  ASSERT_TRUE(least);
  EXPECT_EQ(run(*least, quoted(65536, true)), 1);  // a 16-bit count would be back at 0
  auto most = compile_ok(R"({"type": "string", "maxLength": 100000})");
  ASSERT_TRUE(most);
  EXPECT_EQ(run(*most, quoted(65535, true)), 1);
  EXPECT_EQ(run(*most, quoted(65536, false)), -1);
  // Beside a type list they apply to its string; beside another type they
  // are ignored; with no type they are refused.
  auto nullable = compile_ok(R"({"type": ["string", "null"], "maxLength": 1})");
  ASSERT_TRUE(nullable);
  for (const char* ok : {R"("a")", "null"}) expect_accepts(*nullable, ok);
  EXPECT_EQ(run(*nullable, R"("ab")"), -1);
  auto integers = compile_ok(R"({"type": "array", "items": {"type": "integer", "maxLength": 1}})");
  ASSERT_TRUE(integers);
  expect_accepts(*integers, "[12345]");
  for (const char* bad : {R"({"type": "string", "minLength": 3, "maxLength": 2})", R"({"type": "string", "maxLength": -1})",
                          R"({"type": "string", "minLength": 1.5})", R"({"maxLength": 3})", R"({"minItems": 1})"})
    EXPECT_FALSE(JsonSchema::compile(bad).ok()) << bad;
}

// pydantic's conint(ge=..., le=...) and Field(gt=..., lt=...) on an int.
TEST(JsonSchema, IntegerRanges) {
  auto age = compile_ok(R"({"type": "array", "items": {"type": "integer", "minimum": 18, "exclusiveMaximum": 130}})");
  ASSERT_TRUE(age);
  for (const char* ok : {"[18, 129]", "[99,100]", "[ 20 ]"}) expect_accepts(*age, ok);
  for (const char* bad : {"[17]", "[130]", "[-18]", "[0]", "[1000]", "[18, 5]", "[007]"})
    EXPECT_EQ(run(*age, bad), -1) << bad;
  // A prefix is refused as soon as no integer of the range begins with it:
  // "1" may become 18 or 100; "13" is below the range and 130 on above it.
  EXPECT_EQ(run(*age, "[1"), 0);
  EXPECT_EQ(run(*age, "[13"), -1);
  auto small = compile_ok(R"({"type": "array", "items": {"type": "integer", "minimum": -5, "maximum": 12}})");
  ASSERT_TRUE(small);
  for (const char* ok : {"[-5]", "[-0]", "[0]", "[12]", "[1, -1, 10]"}) expect_accepts(*small, ok);
  for (const char* bad : {"[-6]", "[13]", "[-10]", "[120]", "[-"}) EXPECT_NE(run(*small, bad), 1) << bad;
  EXPECT_EQ(run(*small, "[2"), 0);
  EXPECT_EQ(run(*small, "[20"), -1);
  // The masks at "[", "[1", "[-" and "[12" equal checking every token.
  for (const char* prefix : {"[", "[1", "[-", "[12"}) {
    SchemaState state(small.get());
    for (const char* c = prefix; *c; ++c) ASSERT_TRUE(state.feed(static_cast<uint8_t>(*c))) << prefix;
    expect_trie_mask_exact(state, prefix);
  }
  // Bounds at the ends of int64, fractions rounded inward, and refusals.
  auto wide = compile_ok(R"({"type": "array", "items": {"type": "integer", "minimum": -9223372036854775808,
                                                       "maximum": 9223372036854775807}})");
  ASSERT_TRUE(wide);
  for (const char* ok : {"[-9223372036854775808]", "[9223372036854775807]"}) expect_accepts(*wide, ok);
  for (const char* bad : {"[-9223372036854775809]", "[9223372036854775808]", "[12345678901234567890]"})
    EXPECT_EQ(run(*wide, bad), -1) << bad;
  auto half = compile_ok(R"({"type": "array", "items": {"type": "integer", "minimum": 0.5, "maximum": 2.5}})");
  ASSERT_TRUE(half);
  expect_accepts(*half, "[1, 2]");
  for (const char* bad : {"[0]", "[3]"}) EXPECT_EQ(run(*half, bad), -1) << bad;
  for (const char* bad : {R"({"type": "integer", "minimum": 3, "maximum": 2})", R"({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2})",
                          R"({"type": "integer", "minimum": "1"})", R"({"minimum": 0})"})
    EXPECT_FALSE(JsonSchema::compile(bad).ok()) << bad;
  auto text = compile_ok(R"({"type": "string", "minimum": 5})");  // ignored beside a string
  ASSERT_TRUE(text);
  expect_accepts(*text, R"("a")");
}

// pydantic's confloat(ge=..., le=...) and Field(gt=..., lt=...) on a float:
// the value, parsed to a double as a validator reads it, stays in the range;
// it is written without an exponent.
TEST(JsonSchema, NumberRanges) {
  auto unit = compile_ok(R"({"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}})");
  ASSERT_TRUE(unit);
  for (const char* ok : {"[0]", "[1]", "[0.5, 0.25]", "[1.0]", "[1.000]", "[0.999]", "[-0]", "[-0.0]", "[0.0001]"})
    expect_accepts(*unit, ok);
  for (const char* bad : {"[1.5]", "[2]", "[-0.5]", "[1.0001]", "[10]", "[5e-1]", "[0.1E1]", "[-1]"})
    EXPECT_EQ(run(*unit, bad), -1) << bad;
  // Prefixes are refused as soon as no number of the range begins with them.
  for (const char* open : {"[0", "[0.", "[1", "[1.", "[1.0", "[-", "[-0", "[-0."}) EXPECT_EQ(run(*unit, open), 0) << open;
  for (const char* dead : {"[2", "[1.1", "[1.01", "[-1", "[-0.1", "[0e", "[1e"}) EXPECT_EQ(run(*unit, dead), -1) << dead;
  // Exclusive bounds, a range far from 0, bounds that are not exact in
  // binary (0.1 and 0.3 parse to the bounds' own doubles).
  auto open = compile_ok(R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.3}})");
  ASSERT_TRUE(open);
  for (const char* ok : {"[0.2]", "[0.1000001]", "[0.2999]"}) expect_accepts(*open, ok);
  for (const char* bad : {"[0.1]", "[0.3]", "[0.30]", "[0]", "[0.31]"}) EXPECT_EQ(run(*open, bad), -1) << bad;
  auto closed = compile_ok(R"({"type": "array", "items": {"type": "number", "minimum": 0.1, "maximum": 0.3}})");
  ASSERT_TRUE(closed);
  for (const char* ok : {"[0.1]", "[0.3]", "[0.30000]"}) expect_accepts(*closed, ok);
  EXPECT_EQ(run(*closed, "[0.3000000001]"), -1);
  auto far = compile_ok(R"({"type": "array", "items": {"type": "number", "minimum": -2500.5, "maximum": -1200}})");
  ASSERT_TRUE(far);
  for (const char* ok : {"[-2500.5]", "[-1200]", "[-1999.99]", "[-2500.4999]"}) expect_accepts(*far, ok);
  for (const char* bad : {"[-2500.51]", "[-1199.9]", "[1500]", "[-12000]", "[-3000]"}) EXPECT_EQ(run(*far, bad), -1) << bad;
  EXPECT_EQ(run(*far, "[-1"), 0);   // -1200 to -1999.99...
  EXPECT_EQ(run(*far, "[-3"), -1);  // -3 is above the range, -30 and longer below it
  auto tiny = compile_ok(R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.00000123}})");
  ASSERT_TRUE(tiny);
  for (const char* ok : {"[0.00000123]", "[0.000001]", "[0.0000000000001]"}) expect_accepts(*tiny, ok);
  for (const char* bad : {"[0]", "[0.0]", "[0.00000124]"}) EXPECT_EQ(run(*tiny, bad), -1) << bad;
  // At most 19 significant digits: enough for every double, no more.
  expect_accepts(*unit, "[0.1234567890123456789]");
  EXPECT_EQ(run(*unit, "[0.12345678901234567890"), -1);
  expect_accepts(*unit, "[0.00000000000000000000000001]");  // leading zeros are not significant
  // Unranged numbers keep their exponents.
  auto free = compile_ok(R"({"type": "array", "items": {"type": "number"}})");
  ASSERT_TRUE(free);
  expect_accepts(*free, "[5e-1, -2.5E+3]");
  // The masks at the range's edges equal checking every token.
  for (const char* prefix : {"[", "[0", "[0.", "[1", "[1.", "[-", "[-0"}) {
    SchemaState state(unit.get());
    for (const char* c = prefix; *c; ++c) ASSERT_TRUE(state.feed(static_cast<uint8_t>(*c))) << prefix;
    expect_trie_mask_exact(state, prefix);
  }
  for (const char* prefix : {"[-", "[-1", "[-2", "[-25", "[-2500."}) {
    SchemaState state(far.get());
    for (const char* c = prefix; *c; ++c) ASSERT_TRUE(state.feed(static_cast<uint8_t>(*c))) << prefix;
    expect_trie_mask_exact(state, prefix);
  }
  for (const char* bad : {R"({"type": "number", "minimum": 2, "maximum": 1})", R"({"type": "number", "exclusiveMinimum": 1, "maximum": 1})",
                          R"({"type": "number", "minimum": "0"})", R"({"type": "number", "minimum": 1e999})"})
    EXPECT_FALSE(JsonSchema::compile(bad).ok()) << bad;
}

TEST(JsonSchema, WhatIsOutsideTheSubsetIsRefusedByName) {
  struct Case {
    const char* schema;
    const char* fragment;
  } cases[] = {
      {R"({"type": "string", "pattern": "^a"})", "'pattern'"},
      {R"({"type": "array", "maxItems": 2, "uniqueItems": true})", "'uniqueItems'"},
      {R"({"type": "number", "minimum": 1, "exclusiveMaximum": 1})", "matches nothing"},
      {R"({"maxLength": 2})", "without a 'type'"},
      {R"({"type": "array", "items": {"type": "integer", "multipleOf": 2}})", "'multipleOf'"},
      {R"({"type": "object", "properties": {"a": {}}, "additionalProperties": true})", "additionalProperties"},
      {R"({"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object"}]})", "open with different"},
      {R"({"$ref": "#/$defs/Missing"})", "does not name"},
      {R"({"type": "object", "properties": {"a": {}}, "required": ["b"]})", "'b' is not in"},
      {R"({"type": "thing"})", "not a JSON Schema type"},
      {R"(not json)", "not valid JSON"},
      {R"(false)", "matches nothing"},
  };
  for (const Case& c : cases) {
    Result<std::shared_ptr<const JsonSchema>> s = JsonSchema::compile(c.schema);
    ASSERT_FALSE(s.ok()) << c.schema;
    EXPECT_NE(s.status().message().find(c.fragment), std::string::npos) << c.schema << " -> " << s.status().message();
  }
}

TEST(JsonSchemaTrie, MaskEqualsCheckingEveryToken) {
  auto schema = compile_ok(kPerson);
  ASSERT_TRUE(schema);
  for (const char* prefix : {"", "{", "{\"na", "{\"name\": \"An", "{\"name\": \"\xe4", "{\"name\": \"A\", \"age\": 1",
                             "{\"name\": \"A\", \"age\": 1, \"tags\": [", "{\"name\": \"A\", \"age\": 1, \"tags\": [], \"color\": \"",
                             "{\"name\": \"A\", \"age\": 1, \"tags\": [], \"color\": \"red\", \"pet\": "}) {
    SchemaState state(schema.get());
    for (const char* c = prefix; *c; ++c) ASSERT_TRUE(state.feed(static_cast<uint8_t>(*c))) << prefix;
    expect_trie_mask_exact(state, prefix);
  }
}

// Random tokens among the allowed ones: every walk that ends is a value of the schema.
// 30 random walks through the masks of `schema` (random_walk's closers);
// `check` sees each text that closes, parsed. Returns how many closed.
int closed_walks(const std::shared_ptr<const JsonSchema>& schema, unsigned seed,
                 std::initializer_list<std::string_view> closers,
                 const std::function<void(const nlohmann::json&, const std::string&)>& check) {
  const ConstraintTestVocab& vocab = constraint_test_vocab();
  EXPECT_TRUE(vocab.trie && schema);
  if (!vocab.trie || !schema) return 0;
  std::mt19937 rng(seed);
  int closed = 0;
  for (int walk = 0; walk < 30; ++walk) {
    std::unique_ptr<TokenConstraint> c = json_schema_constraint(vocab.trie, schema);
    const std::string text = random_walk(*c, rng, 200, closers);
    if (!c->complete()) continue;
    ++closed;
    const auto v = nlohmann::json::parse(text, nullptr, false);
    EXPECT_TRUE(v.is_object()) << text;
    if (v.is_object()) check(v, text);
  }
  return closed;
}

TEST(JsonSchemaTrie, RandomWalksEndInValuesOfTheSchema) {
  const int closed = closed_walks(compile_ok(kPerson), 11, {"\"", "\",", "]", "}", "null"},
                                  [](const nlohmann::json& v, const std::string& text) {
                                    EXPECT_TRUE(v["name"].is_string()) << text;
                                    EXPECT_TRUE(v["age"].is_number_integer()) << text;
                                    EXPECT_TRUE(v["tags"].is_array()) << text;
                                    EXPECT_TRUE(v["color"] == "red" || v["color"] == "green") << text;
                                    EXPECT_TRUE(v["pet"].is_null() || v["pet"]["kind"].is_string()) << text;
                                    EXPECT_EQ(v.size(), 5u) << text;
                                  });
  EXPECT_GT(closed, 0);
}

// A bounded string and integers: every text that closes keeps the bounds.
TEST(JsonSchemaTrie, RandomWalksKeepLengthsAndRanges) {
  auto schema = compile_ok(R"({"type": "object", "properties": {
      "code": {"type": "string", "minLength": 2, "maxLength": 6},
      "n": {"type": "integer", "minimum": -40, "maximum": 1234},
      "sevens": {"type": "array", "items": {"type": "integer", "minimum": 7, "maximum": 7}, "maxItems": 3},
      "p": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}},
      "required": ["code", "n", "sevens", "p"]})");
  const int closed = closed_walks(schema, 5, {"\"", "\",", ",", "]", "}"},
                                  [](const nlohmann::json& v, const std::string& text) {
                                    const std::string code = v["code"].get<std::string>();
                                    const auto chars = std::count_if(code.begin(), code.end(), [](char ch) {
                                      return (static_cast<uint8_t>(ch) & 0xC0) != 0x80;
                                    });
                                    EXPECT_TRUE(chars >= 2 && chars <= 6) << text;
                                    EXPECT_TRUE(v["n"].is_number_integer() && v["n"].get<int64_t>() >= -40 &&
                                                v["n"].get<int64_t>() <= 1234)
                                        << text;
                                    EXPECT_LE(v["sevens"].size(), 3u) << text;
                                    for (const auto& x : v["sevens"]) EXPECT_EQ(x, 7) << text;
                                    EXPECT_TRUE(v["p"].is_number() && v["p"].get<double>() > 0 &&
                                                v["p"].get<double>() <= 1)
                                        << text;
                                  });
  EXPECT_GT(closed, 0);
}

}  // namespace
}  // namespace ft
