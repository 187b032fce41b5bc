// The OpenAI-compatible API over an Engine: routes, authentication, the
// bridge from engine callbacks to HTTP responses (streamed or not), metrics
// and one log line per request.
//
// The bridge: each generation request owns an EventQueue. The engine's
// callback (engine thread) pushes events into it; the HTTP handler thread pops
// them and writes the response. While waiting it checks the client every
// kClientPoll; a client that went away gets its request cancelled at once.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/engine/engine.h"
#include "runtime/server/http_server.h"
#include "runtime/server/protocol.h"

namespace ft::server {

struct ApiServerOptions {
  std::string served_model_name = {};
  std::string api_key = {};  // empty: no authentication
  // Chat answers of thinking models: <think>...</think> goes out as
  // reasoning_content (reasoning.h); false: it stays in content.
  bool split_reasoning = true;
};

class ApiServer {
 public:
  static constexpr std::chrono::milliseconds kClientPoll{20};

  explicit ApiServer(ApiServerOptions options);

  // The loaded engine; until it is set, /health answers 503 and the endpoints
  // that need the model answer 503 "loading". Not owned: it must outlive
  // every handler (stop the HTTP server before destroying it), and this
  // ApiServer must outlive the engine, whose callbacks call back into it.
  void set_engine(Engine* engine);
  // Shown by /health while loading ("compiling kernels 12/40").
  void set_progress(std::string line);

  // The HttpHandler: call from HTTP connection threads.
  void handle(const HttpRequest& request, ResponseWriter& writer);

 private:
  void dispatch(const HttpRequest& request, ResponseWriter& writer);
  void generate(ApiKind kind, const HttpRequest& request, ResponseWriter& writer);
  void tokenize(const HttpRequest& request, ResponseWriter& writer);
  void detokenize(const HttpRequest& request, ResponseWriter& writer);
  void apply_template(const HttpRequest& request, ResponseWriter& writer);
  void health(ResponseWriter& writer);
  void metrics(ResponseWriter& writer);
  void model(const HttpRequest& request, ResponseWriter& writer);
  bool authorized(const HttpRequest& request) const;
  // The engine, or null after a 503 "loading" was sent.
  Engine* require_engine(ResponseWriter& writer);
  void count_response(int status);
  void count_finish(FinishReason reason);
  ServerCounters counters() const;

  ApiServerOptions options_;
  std::atomic<Engine*> engine_{nullptr};
  int64_t created_ = 0;
  std::atomic<uint64_t> next_serial_{1};
  mutable std::mutex mutex_;  // guards progress_ and responses_
  std::string progress_;
  std::map<int, uint64_t> responses_;
  std::array<std::atomic<uint64_t>, 5> finished_{};  // by FinishReason

  friend class CountingWriter;
};

}  // namespace ft::server
