#include "runtime/server/protocol.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "runtime/engine/json_schema.h"

namespace ft::server {
namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a number";
    default: return "an integer";
  }
}

ApiError wrong_type(const std::string& field, const char* expected, const json& got) {
  return bad_request(fmt::format("'{}' must be {}, got {}", field, expected, type_name(got)), field);
}

// Typed access to the fields of a request object; null counts as absent.
class Fields {
 public:
  explicit Fields(const json& object) : object_(object) {}

  const json* find(const std::string& name) const {
    auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  std::optional<ApiError> number(const std::string& name, float& out, double lo, double hi) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_number()) return wrong_type(name, "a number", *v);
    double d = v->get<double>();
    if (!(d >= lo && d <= hi))
      return bad_request(fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, d), name);
    out = static_cast<float>(d);
    return std::nullopt;
  }

  std::optional<ApiError> integer(const std::string& name, int64_t& out, int64_t lo, int64_t hi) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    bool whole_float = v->is_number_float() && std::trunc(v->get<double>()) == v->get<double>();
    if (!v->is_number_integer() && !whole_float) return wrong_type(name, "an integer", *v);
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
      return bad_request(fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, v->get<uint64_t>()), name);
    int64_t i = whole_float ? static_cast<int64_t>(v->get<double>()) : v->get<int64_t>();
    if (i < lo || i > hi) return bad_request(fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, i), name);
    out = i;
    return std::nullopt;
  }

  std::optional<ApiError> boolean(const std::string& name, bool& out) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return wrong_type(name, "a boolean", *v);
    out = v->get<bool>();
    return std::nullopt;
  }

  std::optional<ApiError> string(const std::string& name, std::string& out) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) return wrong_type(name, "a string", *v);
    out = v->get<std::string>();
    return std::nullopt;
  }

 private:
  const json& object_;
};

#define FT_API_CHECK(expr)                      \
  do {                                          \
    if (auto ft_err_ = (expr)) return *ft_err_; \
  } while (0)

ApiResult<json> parse_object(std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return bad_request("the request body is not valid JSON");
  if (!parsed.is_object()) return bad_request(fmt::format("the request body must be a JSON object, got {}", type_name(parsed)));
  return parsed;
}

std::optional<ApiError> parse_token_ids(const json& v, const std::string& field, std::vector<int32_t>& out) {
  for (const json& id : v) {
    if (!id.is_number_integer()) return bad_request(fmt::format("'{}' must hold token ids (integers)", field), field);
    int64_t i = id.get<int64_t>();
    if (i < 0 || i > std::numeric_limits<int32_t>::max())
      return bad_request(fmt::format("'{}' holds an invalid token id {}", field, i), field);
    out.push_back(static_cast<int32_t>(i));
  }
  return std::nullopt;
}

std::optional<ApiError> parse_stop(const Fields& f, SamplingParams& s) {
  const json* stop = f.find("stop");
  if (!stop) return std::nullopt;
  if (stop->is_string()) {
    if (!stop->get<std::string>().empty()) s.stop.push_back(stop->get<std::string>());
    return std::nullopt;
  }
  if (!stop->is_array()) return wrong_type("stop", "a string or an array of strings", *stop);
  if (stop->size() > kMaxStopStrings)
    return bad_request(fmt::format("'stop' holds at most {} strings", kMaxStopStrings), "stop");
  for (const json& item : *stop) {
    if (!item.is_string()) return bad_request("'stop' must be a string or an array of strings", "stop");
    if (!item.get<std::string>().empty()) s.stop.push_back(item.get<std::string>());
  }
  return std::nullopt;
}

std::optional<ApiError> parse_template_kwargs(const Fields& f, std::optional<bool>& enable_thinking) {
  const json* kwargs = f.find("chat_template_kwargs");
  if (!kwargs) return std::nullopt;
  if (!kwargs->is_object()) return wrong_type("chat_template_kwargs", "an object", *kwargs);
  auto it = kwargs->find("enable_thinking");
  if (it == kwargs->end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return wrong_type("chat_template_kwargs.enable_thinking", "a boolean", *it);
  enable_thinking = it->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> parse_messages(const Fields& f, json& out) {
  const json* messages = f.find("messages");
  if (!messages) return bad_request("'messages' is required", "messages");
  if (!messages->is_array()) return wrong_type("messages", "an array", *messages);
  if (messages->empty()) return bad_request("'messages' must not be empty", "messages");
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) return wrong_type(where, "an object", m);
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return bad_request(where + ".role must be a string", where + ".role");
    auto content = m.find("content");
    if (content != m.end() && !content->is_string() && !content->is_array() && !content->is_null())
      return wrong_type(where + ".content", "a string or an array of content parts", *content);
    if (content != m.end() && content->is_array()) {
      for (size_t j = 0; j < content->size(); ++j) {
        const json& part = (*content)[j];
        std::string pwhere = fmt::format("{}.content[{}]", where, j);
        if (!part.is_object()) return wrong_type(pwhere, "an object", part);
        auto type = part.find("type");
        if (type == part.end() || !type->is_string()) return bad_request(pwhere + ".type must be a string", pwhere + ".type");
        if (type->get<std::string>() != "text")
          return bad_request(fmt::format("content part type '{}' is not supported: this model takes text only",
                                         type->get<std::string>()),
                             pwhere + ".type");
        auto text = part.find("text");
        if (text == part.end() || !text->is_string()) return bad_request(pwhere + ".text must be a string", pwhere + ".text");
      }
    }
  }
  out = *messages;
  return std::nullopt;
}

std::optional<ApiError> parse_prompt(const Fields& f, GenerationRequest& r) {
  const json* prompt = f.find("prompt");
  if (!prompt) return bad_request("'prompt' is required", "prompt");
  if (prompt->is_string()) {
    r.prompt = prompt->get<std::string>();
    return std::nullopt;
  }
  if (!prompt->is_array()) return wrong_type("prompt", "a string, an array of token ids or an array of one string", *prompt);
  if (prompt->empty()) return bad_request("'prompt' must not be empty", "prompt");
  const json& first = prompt->front();
  if (first.is_string() || first.is_array()) {
    // A batch of prompts: the API's n prompts; one is what this server runs.
    if (prompt->size() != 1) return bad_request("only one prompt per request is supported", "prompt");
    if (first.is_string()) {
      r.prompt = first.get<std::string>();
      return std::nullopt;
    }
    r.prompt_is_tokens = true;
    return parse_token_ids(first, "prompt", r.prompt_tokens);
  }
  r.prompt_is_tokens = true;
  return parse_token_ids(*prompt, "prompt", r.prompt_tokens);
}

// Fields both endpoints share: sampling, limits, streaming.
std::optional<ApiError> parse_common(const Fields& f, GenerationRequest& r) {
  SamplingParams& s = r.sampling;
  FT_API_CHECK(f.string("model", r.model));
  FT_API_CHECK(f.boolean("stream", r.stream));
  if (const json* opts = f.find("stream_options")) {
    if (!opts->is_object()) return wrong_type("stream_options", "an object", *opts);
    FT_API_CHECK(Fields(*opts).boolean("include_usage", r.include_usage));
  }
  int64_t n = 1;
  FT_API_CHECK(f.integer("n", n, 1, 16));
  r.n = static_cast<int>(n);

  FT_API_CHECK(f.number("temperature", s.temperature, 0, 100));
  FT_API_CHECK(f.number("top_p", s.top_p, 0, 1));
  if (f.find("top_p") && s.top_p <= 0) return bad_request("'top_p' must be greater than 0", "top_p");
  int64_t top_k = 0;
  FT_API_CHECK(f.integer("top_k", top_k, -1, std::numeric_limits<int32_t>::max()));
  s.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);  // -1 is vLLM's "off"
  FT_API_CHECK(f.number("min_p", s.min_p, 0, 1));
  FT_API_CHECK(f.number("presence_penalty", s.presence_penalty, -2, 2));
  FT_API_CHECK(f.number("frequency_penalty", s.frequency_penalty, -2, 2));
  FT_API_CHECK(f.number("repetition_penalty", s.repetition_penalty, 0, 100));
  if (f.find("repetition_penalty") && s.repetition_penalty <= 0)
    return bad_request("'repetition_penalty' must be greater than 0", "repetition_penalty");

  if (const json* seed = f.find("seed")) {
    if (!seed->is_number_integer()) return wrong_type("seed", "an integer", *seed);
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
  }
  int64_t max_tokens = -1;
  const char* max_name = f.find("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  FT_API_CHECK(f.integer(max_name, max_tokens, 1, std::numeric_limits<int32_t>::max()));
  r.max_tokens_given = max_tokens > 0;
  s.max_tokens = r.max_tokens_given ? static_cast<int>(max_tokens)
                                    : (r.kind == ApiKind::kCompletion ? kCompletionDefaultMaxTokens : 0);
  FT_API_CHECK(parse_stop(f, s));
  FT_API_CHECK(f.boolean("ignore_eos", s.ignore_eos));
  if (const json* ids = f.find("stop_token_ids")) {
    if (!ids->is_array()) return wrong_type("stop_token_ids", "an array of token ids", *ids);
    FT_API_CHECK(parse_token_ids(*ids, "stop_token_ids", s.stop_token_ids));
  }
  if (const json* bias = f.find("logit_bias"); bias && !bias->is_null()) {
    if (!bias->is_object()) return wrong_type("logit_bias", "an object of token ids to numbers", *bias);
    for (const auto& [key, value] : bias->items()) {
      char* end = nullptr;
      const long id = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < 0 || id > std::numeric_limits<int32_t>::max())
        return bad_request(fmt::format("logit_bias key '{}' is not a token id", key), "logit_bias");
      if (!value.is_number() || value.get<double>() < -100 || value.get<double>() > 100)
        return bad_request(fmt::format("logit_bias of token {} must be a number from -100 to 100", key), "logit_bias");
      s.logit_bias.emplace_back(static_cast<int32_t>(id), value.get<float>());
    }
  }
  if (const json* format = f.find("response_format")) {
    if (!format->is_object()) return wrong_type("response_format", "an object", *format);
    auto type = format->find("type");
    if (type == format->end() || !type->is_string())
      return bad_request("'response_format.type' must be a string", "response_format");
    const std::string t = type->get<std::string>();
    if (t == "json_object") {
      s.json_object = true;
    } else if (t == "json_schema") {
      // {"type": "json_schema", "json_schema": {"name", "schema", "strict"?}}
      auto spec = format->find("json_schema");
      if (spec == format->end() || !spec->is_object() || !spec->contains("schema"))
        return bad_request("response_format json_schema needs 'json_schema': {\"name\": ..., \"schema\": {...}}",
                           "response_format");
      Result<std::shared_ptr<const JsonSchema>> schema = JsonSchema::compile((*spec)["schema"].dump());
      if (!schema.ok())
        return bad_request("response_format json_schema: " + schema.status().user_message(), "response_format",
                           "unsupported_schema");
      s.json_schema = std::move(*schema);
    } else if (t != "text") {
      return bad_request(fmt::format("response_format type '{}' is not supported by this server (only 'text', "
                                     "'json_object' and 'json_schema')",
                                     t),
                         "response_format", "unsupported_response_format");
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<const json*> tool_functions(const json& tools) {
  std::vector<const json*> out;
  if (!tools.is_array()) return out;
  for (const json& tool : tools) {
    auto function = tool.is_object() ? tool.find("function") : tool.end();
    if (function == tool.end() || !function->is_object()) continue;
    auto n = function->find("name");
    if (n != function->end() && n->is_string()) out.push_back(&*function);
  }
  return out;
}

const json* find_tool_function(const json& tools, std::string_view name) {
  for (const json* function : tool_functions(tools))
    if ((*function)["name"].get_ref<const std::string&>() == name) return function;
  return nullptr;
}

namespace {

// "tools", and "tool_choice": "auto", "none", "required", or {"type":
// "function", "function": {"name": ...}} naming one of the tools.
std::optional<ApiError> parse_tools(const Fields& f, GenerationRequest& r) {
  if (const json* tools = f.find("tools")) {
    if (!tools->is_array()) return wrong_type("tools", "an array", *tools);
    if (!tools->empty()) r.tools = *tools;
  }
  if (const json* choice = f.find("tool_choice"); choice && !choice->is_null()) {
    const json* name = nullptr;
    if (choice->is_object() && choice->value("type", json()) == "function") {
      auto function = choice->find("function");
      if (function != choice->end() && function->is_object()) {
        auto n = function->find("name");
        if (n != function->end() && n->is_string()) name = &*n;
      }
    }
    const bool known = choice->is_string() && (*choice == "auto" || *choice == "none" || *choice == "required");
    if (!known && !name)
      return bad_request("tool_choice " + dump(*choice) +
                             " is not supported: give \"auto\", \"none\", \"required\" or "
                             "{\"type\": \"function\", \"function\": {\"name\": ...}}",
                         "tool_choice");
    r.tool_choice_none = *choice == "none";
    r.tool_choice_required = *choice == "required";
    if (name) r.tool_choice_name = name->get<std::string>();
    if ((r.tool_choice_required || name) && r.tools.is_null())
      return bad_request("tool_choice " + dump(*choice) + " needs 'tools'", "tool_choice");
    if (name && !find_tool_function(r.tools, r.tool_choice_name))
      return bad_request("tool_choice names function '" + r.tool_choice_name + "', which is not in 'tools'",
                         "tool_choice");
  }
  return std::nullopt;
}

std::optional<ApiError> parse_chat_fields(const Fields& f, GenerationRequest& r) {
  FT_API_CHECK(parse_messages(f, r.messages));
  FT_API_CHECK(parse_tools(f, r));
  FT_API_CHECK(parse_template_kwargs(f, r.enable_thinking));
  bool logprobs = false;
  FT_API_CHECK(f.boolean("logprobs", logprobs));
  int64_t top = 0;
  FT_API_CHECK(f.integer("top_logprobs", top, 0, kMaxTopLogprobs));
  if (f.find("top_logprobs") && !logprobs)
    return bad_request("'top_logprobs' needs 'logprobs' set to true", "top_logprobs");
  r.sampling.logprobs = logprobs ? static_cast<int>(top) : -1;
  return std::nullopt;
}

std::optional<ApiError> parse_completion_fields(const Fields& f, GenerationRequest& r) {
  FT_API_CHECK(parse_prompt(f, r));
  int64_t logprobs = -1;
  FT_API_CHECK(f.integer("logprobs", logprobs, 0, kMaxTopLogprobs));
  r.sampling.logprobs = static_cast<int>(logprobs);
  FT_API_CHECK(f.boolean("echo", r.echo));
  if (r.echo && r.sampling.logprobs >= 0) r.sampling.prompt_logprobs = r.sampling.logprobs;
  std::string suffix;
  FT_API_CHECK(f.string("suffix", suffix));
  if (!suffix.empty()) return bad_request("'suffix' is not supported", "suffix");
  int64_t best_of = 1;
  FT_API_CHECK(f.integer("best_of", best_of, 1, 128));
  if (best_of != 1) return bad_request("only best_of=1 is supported", "best_of");
  return std::nullopt;
}

std::string token_string_for_json(const ResponseContext& ctx, int32_t token) {
  return ctx.token_text ? ctx.token_text(token) : std::to_string(token);
}

json bytes_json(const std::string& text) {
  json bytes = json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

// A logprob as JSON: -inf (a token the sampler ruled out) has no JSON number.
// NaN: no logprob (an echoed prompt's first token); -inf: -9999, as OpenAI
// writes an impossible token.
json logprob_value(float lp) { return std::isnan(lp) ? json() : std::isfinite(lp) ? json(lp) : json(-9999.0); }

json chat_logprobs(const ResponseContext& ctx, std::span<const TokenLogprob> logprobs) {
  json content = json::array();
  for (const TokenLogprob& lp : logprobs) {
    std::string text = token_string_for_json(ctx, lp.token);
    json top = json::array();
    for (const auto& [id, value] : lp.top) {
      std::string t = token_string_for_json(ctx, id);
      top.push_back({{"token", t}, {"logprob", logprob_value(value)}, {"bytes", bytes_json(t)}});
    }
    content.push_back({{"token", text}, {"logprob", logprob_value(lp.logprob)}, {"bytes", bytes_json(text)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json completion_logprobs(const ResponseContext& ctx, std::span<const TokenLogprob> logprobs, size_t offset) {
  json tokens = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprob& lp : logprobs) {
    std::string text = token_string_for_json(ctx, lp.token);
    tokens.push_back(text);
    values.push_back(logprob_value(lp.logprob));
    json top = json::object();
    for (const auto& [id, value] : lp.top) top[token_string_for_json(ctx, id)] = logprob_value(value);
    tops.push_back(std::isnan(lp.logprob) ? json() : top);
    offsets.push_back(offset);
    offset += text.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json response_head(const ResponseContext& ctx, const char* object) {
  return {{"id", ctx.id}, {"object", object}, {"created", ctx.created}, {"model", ctx.model}};
}

void metric(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

}  // namespace

ApiError bad_request(std::string message, std::string param, std::string code) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

json error_json(const ApiError& error) {
  return {{"error",
           {{"message", error.message},
            {"type", error.type},
            {"param", error.param.empty() ? json(nullptr) : json(error.param)},
            {"code", error.code.empty() ? json(nullptr) : json(error.code)}}}};
}

std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

ApiResult<GenerationRequest> parse_generation_request(ApiKind kind, std::string_view body) {
  ApiResult<json> parsed = parse_object(body);
  if (!parsed.ok()) return parsed.error();
  Fields f(*parsed);
  GenerationRequest r;
  r.kind = kind;
  FT_API_CHECK(parse_common(f, r));
  FT_API_CHECK(kind == ApiKind::kChat ? parse_chat_fields(f, r) : parse_completion_fields(f, r));
  return r;
}

std::optional<ApiError> check_model(const std::string& requested, const std::string& served) {
  if (requested.empty() || requested == served) return std::nullopt;
  ApiError e;
  e.status = 404;
  e.message = fmt::format("The model '{}' does not exist; this server serves '{}'", requested, served);
  e.param = "model";
  e.code = "model_not_found";
  return e;
}

std::optional<ApiError> check_lengths(const GenerationRequest& request, int prompt_tokens, int max_context) {
  const char* prompt_field = request.kind == ApiKind::kChat ? "messages" : "prompt";
  if (prompt_tokens <= 0) return bad_request("the prompt is empty", prompt_field);
  if (prompt_tokens >= max_context)
    return bad_request(fmt::format("This model's maximum context length is {} tokens; the prompt has {} tokens",
                                   max_context, prompt_tokens),
                       prompt_field, "context_length_exceeded");
  int max_tokens = request.sampling.max_tokens;
  if (request.max_tokens_given && int64_t{prompt_tokens} + max_tokens > max_context)
    return bad_request(fmt::format("This model's maximum context length is {} tokens; you requested {} tokens "
                                   "({} in the prompt, {} for the completion)",
                                   max_context, int64_t{prompt_tokens} + max_tokens, prompt_tokens, max_tokens),
                       "max_tokens", "context_length_exceeded");
  return std::nullopt;
}

ChatRenderOptions chat_render_options(const GenerationRequest& request) {
  ChatRenderOptions options;
  options.messages = request.messages;
  options.tools = request.tools;
  options.add_generation_prompt = true;
  options.enable_thinking = request.enable_thinking;
  return options;
}

const char* openai_finish_reason(FinishReason reason, bool tool_calls) {
  switch (reason) {
    case FinishReason::kStop: return tool_calls ? "tool_calls" : "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
    case FinishReason::kError: return "error";
    case FinishReason::kNone: break;
  }
  return nullptr;
}

std::string make_request_id(ApiKind kind, uint64_t serial) {
  return fmt::format("{}-{:016x}", kind == ApiKind::kChat ? "chatcmpl" : "cmpl", serial);
}

json usage_json(int prompt_tokens, int completion_tokens, int cached_prompt_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_prompt_tokens}}}};
}

json logprobs_json(const ResponseContext& ctx, std::span<const TokenLogprob> logprobs, size_t text_offset) {
  return ctx.kind == ApiKind::kChat ? chat_logprobs(ctx, logprobs) : completion_logprobs(ctx, logprobs, text_offset);
}

// {"id", "type": "function", "function": {"name", "arguments"}}, with its
// "index" in a stream.
json tool_call_json(const ResponseContext& ctx, const ToolCall& call, size_t index, bool stream) {
  json out = json::object();
  if (stream) out["index"] = index;
  if (ctx.short_call_ids) {
    // 9 letters and digits from a hash of the response id and the index (FNV-1a).
    uint64_t h = 1469598103934665603ull;
    for (char c : fmt::format("{}/{}", ctx.id, index)) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    constexpr std::string_view kDigits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    std::string id(9, '0');
    for (char& c : id) {
      c = kDigits[h % kDigits.size()];
      h /= kDigits.size();
    }
    out["id"] = id;
  } else {
    out["id"] = fmt::format("call_{}_{}", ctx.id.substr(ctx.id.find('-') + 1), index);
  }
  out["type"] = "function";
  out["function"] = {{"name", call.name}, {"arguments", call.arguments}};
  return out;
}

json full_response(const ResponseContext& ctx, const Completion& result) {
  return full_response(ctx, std::span<const Completion>(&result, 1));
}

// Prompt tokens count once for all the choices, generated ones for each.
json usage_of(std::span<const Completion> choices) {
  int completion = 0;
  for (const Completion& c : choices) completion += c.completion_tokens;
  const Completion& first = choices.front();
  return usage_json(first.prompt_tokens, completion, first.cached_prompt_tokens);
}

json choice_json(const ResponseContext& ctx, const Completion& result, size_t index) {
  const bool chat = ctx.kind == ApiKind::kChat;
  json choice = {{"index", index}};
  if (chat) {
    choice["message"] = {{"role", "assistant"}, {"content", result.text}};
    if (!result.reasoning.empty()) choice["message"]["reasoning_content"] = result.reasoning;
    if (!result.tool_calls.empty()) {
      if (result.text.empty()) choice["message"]["content"] = nullptr;
      json calls = json::array();
      for (size_t i = 0; i < result.tool_calls.size(); ++i) calls.push_back(tool_call_json(ctx, result.tool_calls[i], i, false));
      choice["message"]["tool_calls"] = std::move(calls);
    }
  } else {
    choice["text"] = result.text;
  }
  choice["logprobs"] = ctx.logprobs ? logprobs_json(ctx, result.logprobs, 0) : json(nullptr);
  const char* finish = openai_finish_reason(result.finish, !result.tool_calls.empty());
  choice["finish_reason"] = finish ? json(finish) : json(nullptr);
  return choice;
}

json full_response(const ResponseContext& ctx, std::span<const Completion> choices) {
  json out = response_head(ctx, ctx.kind == ApiKind::kChat ? "chat.completion" : "text_completion");
  out["choices"] = json::array();
  for (size_t i = 0; i < choices.size(); ++i) out["choices"].push_back(choice_json(ctx, choices[i], i));
  out["usage"] = usage_of(choices);
  return out;
}

json stream_chunk(const ResponseContext& ctx, const ChunkPart& part, bool include_usage) {
  const bool chat = ctx.kind == ApiKind::kChat;
  json choice = {{"index", part.index}};
  if (chat) {
    json delta = json::object();
    if (part.role) delta["role"] = "assistant";
    if (!part.text.empty() || part.role) delta["content"] = std::string(part.text);
    if (!part.reasoning.empty()) delta["reasoning_content"] = std::string(part.reasoning);
    if (!part.tool_calls.empty()) {
      json calls = json::array();
      for (size_t i = 0; i < part.tool_calls.size(); ++i)
        calls.push_back(tool_call_json(ctx, part.tool_calls[i], part.tool_index + i, true));
      delta["tool_calls"] = std::move(calls);
    }
    choice["delta"] = delta;
  } else {
    choice["text"] = std::string(part.text);
  }
  choice["logprobs"] = ctx.logprobs && !part.logprobs.empty() ? logprobs_json(ctx, part.logprobs, part.text_offset)
                                                              : json(nullptr);
  choice["finish_reason"] = part.finish ? json(part.finish) : json(nullptr);
  json out = response_head(ctx, chat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array({choice});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

json usage_chunk(const ResponseContext& ctx, const Completion& result) {
  return usage_chunk(ctx, std::span<const Completion>(&result, 1));
}

json usage_chunk(const ResponseContext& ctx, std::span<const Completion> choices) {
  json out = response_head(ctx, ctx.kind == ApiKind::kChat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array();
  out["usage"] = usage_of(choices);
  return out;
}

std::string sse_data(const json& value) { return "data: " + dump(value) + "\n\n"; }

ApiResult<TokenizeRequest> parse_tokenize_request(std::string_view body) {
  ApiResult<json> parsed = parse_object(body);
  if (!parsed.ok()) return parsed.error();
  Fields f(*parsed);
  TokenizeRequest r;
  FT_API_CHECK(f.string("model", r.model));
  if (f.find("prompt")) {
    std::string prompt;
    FT_API_CHECK(f.string("prompt", prompt));
    r.prompt = std::move(prompt);
  } else if (f.find("messages")) {
    FT_API_CHECK(parse_messages(f, r.messages));
    r.add_special = false;
  } else {
    return bad_request("give 'prompt' (a string) or 'messages'", "prompt");
  }
  FT_API_CHECK(f.boolean("add_special_tokens", r.add_special));
  return r;
}

ApiResult<std::vector<int32_t>> parse_detokenize_request(std::string_view body) {
  ApiResult<json> parsed = parse_object(body);
  if (!parsed.ok()) return parsed.error();
  const json* tokens = Fields(*parsed).find("tokens");
  if (!tokens) return bad_request("'tokens' is required", "tokens");
  if (!tokens->is_array()) return wrong_type("tokens", "an array of token ids", *tokens);
  std::vector<int32_t> ids;
  FT_API_CHECK(parse_token_ids(*tokens, "tokens", ids));
  return ids;
}

ApiResult<ChatRenderOptions> parse_apply_template_request(std::string_view body) {
  ApiResult<json> parsed = parse_object(body);
  if (!parsed.ok()) return parsed.error();
  Fields f(*parsed);
  GenerationRequest r;
  FT_API_CHECK(parse_messages(f, r.messages));
  FT_API_CHECK(parse_tools(f, r));
  FT_API_CHECK(parse_template_kwargs(f, r.enable_thinking));
  ChatRenderOptions options = chat_render_options(r);
  FT_API_CHECK(f.boolean("add_generation_prompt", options.add_generation_prompt));
  return options;
}

json model_json(const std::string& served_name, int64_t created, int max_context) {
  json model = {{"id", served_name}, {"object", "model"}, {"created", created}, {"owned_by", "freetoken"}};
  if (max_context > 0) model["max_model_len"] = max_context;
  return model;
}

json models_json(const std::string& served_name, int64_t created, int max_context) {
  return {{"object", "list"}, {"data", json::array({model_json(served_name, created, max_context)})}};
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string prometheus_text(const EngineMetrics* engine, const ServerCounters& counters) {
  std::string out;
  metric(out, "ft_ready", "gauge", "1 once the model is loaded and the server answers requests", counters.ready ? 1 : 0);
  out += "# HELP ft_http_responses_total HTTP responses sent, by status code\n# TYPE ft_http_responses_total counter\n";
  for (const auto& [status, count] : counters.http_responses)
    out += fmt::format("ft_http_responses_total{{code=\"{}\"}} {}\n", status, count);
  out += "# HELP ft_request_finished_total Generation requests ended, by finish reason\n"
         "# TYPE ft_request_finished_total counter\n";
  for (const auto& [reason, count] : counters.finished)
    out += fmt::format("ft_request_finished_total{{reason=\"{}\"}} {}\n", reason, count);
  if (!engine) return out;
  const EngineMetrics& m = *engine;
  metric(out, "ft_requests_total", "counter", "Requests submitted to the engine", static_cast<double>(m.requests_total));
  metric(out, "ft_requests_finished_total", "counter", "Requests the engine finished (any reason)",
         static_cast<double>(m.requests_finished));
  metric(out, "ft_prompt_tokens_total", "counter", "Prompt tokens processed", static_cast<double>(m.prompt_tokens_total));
  metric(out, "ft_prompt_tokens_cached_total", "counter", "Prompt tokens served from the prefix cache",
         static_cast<double>(m.cached_prompt_tokens_total));
  metric(out, "ft_generation_tokens_total", "counter", "Tokens generated", static_cast<double>(m.generation_tokens_total));
  metric(out, "ft_requests_waiting", "gauge", "Requests queued, not yet scheduled", m.waiting);
  metric(out, "ft_requests_running", "gauge", "Requests in the running batch", m.running);
  metric(out, "ft_kv_blocks_used", "gauge", "KV cache blocks in use", m.kv_blocks_used);
  metric(out, "ft_kv_blocks_total", "gauge", "KV cache blocks in all", m.kv_blocks_total);
  metric(out, "ft_kv_cache_usage_ratio", "gauge", "Fraction of the KV cache in use",
         m.kv_blocks_total > 0 ? static_cast<double>(m.kv_blocks_used) / m.kv_blocks_total : 0.0);
  metric(out, "ft_preemptions_total", "counter", "Sequences preempted (recomputed) for lack of KV blocks",
         static_cast<double>(m.preemptions_total));
  out += "# HELP ft_time_to_first_token_seconds Time from submission to the first generated token\n"
         "# TYPE ft_time_to_first_token_seconds summary\n";
  out += fmt::format("ft_time_to_first_token_seconds_sum {}\nft_time_to_first_token_seconds_count {}\n",
                     m.ttft_ms_sum / 1000.0, m.ttft_count);
  metric(out, "ft_decode_tokens_per_second", "gauge", "Decode speed of the last engine step (all sequences)",
         m.decode_tokens_per_s_last);
  return out;
}

}  // namespace ft::server
