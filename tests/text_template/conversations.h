// OpenAI-style conversations shared by the chat-template tests.
#pragma once

#include <nlohmann/json.hpp>

namespace ft::test {

using json = nlohmann::ordered_json;

inline json msg(const char* role, json content) { return json{{"role", role}, {"content", std::move(content)}}; }

inline json weather_tools() {
  return json::parse(R"([
    {"type": "function", "function": {
      "name": "get_weather", "description": "Get the current weather in a city",
      "parameters": {"type": "object",
        "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"},
                       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}},
    {"type": "function", "function": {
      "name": "search", "description": "Search the web",
      "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
  ])");
}

// An assistant turn calling get_weather, as an OpenAI client sends it:
// arguments as a JSON string, content null.
inline json weather_call(const char* id = "call12345", const char* city = "Paris") {
  json args = {{"city", city}, {"unit", "celsius"}};
  return json{{"role", "assistant"},
              {"content", nullptr},
              {"tool_calls",
               {{{"id", id}, {"type", "function"}, {"function", {{"name", "get_weather"}, {"arguments", args.dump()}}}}}}};
}

inline json tool_result(const char* id, const char* content) {
  return json{{"role", "tool"}, {"tool_call_id", id}, {"name", "get_weather"}, {"content", content}};
}

inline json system_user() {
  return json::array({msg("system", "You are a helpful assistant."), msg("user", "Hello! What is 2+2?")});
}

inline json multi_turn() {
  return json::array({msg("system", "You are a concise assistant."), msg("user", "Hi"),
                      msg("assistant", "Hello! How can I help?"), msg("user", "Tell me a joke.")});
}

inline json user_first() {
  return json::array({msg("user", "Just a user turn."), msg("assistant", "Sure."), msg("user", "Thanks")});
}

inline json unicode_turns() {
  return json::array({msg("user", "你好，世界！🌍 Ça va? — naïve café\nnew line\ttab"),
                      msg("assistant", "こんにちは 👋 Привет"),
                      msg("user", "emoji 🎉🎉 and \"quotes\" and back\\slash and <|im_end|> in text")});
}

inline json content_parts() {
  return json::array({msg("system", json::array({{{"type", "text"}, {"text", "Part one."}},
                                                 {{"type", "text"}, {"text", "Part two."}}})),
                      msg("user", json::array({{{"type", "text"}, {"text", "Look:"}},
                                               {{"type", "text"}, {"text", "two parts"}}}))});
}

inline json tool_round(bool with_system) {
  json m = json::array();
  if (with_system) m.push_back(msg("system", "You can call tools."));
  m.push_back(msg("user", "What's the weather in Paris?"));
  m.push_back(weather_call());
  m.push_back(tool_result("call12345", "{\"temperature\": 21, \"condition\": \"sunny\"}"));
  return m;
}

}  // namespace ft::test
