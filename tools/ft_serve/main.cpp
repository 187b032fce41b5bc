// ft-serve: the OpenAI-compatible HTTP server. It listens at once (so /health
// answers 503 while the model loads and kernels compile), then creates the
// engine, then serves until SIGINT or SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "runtime/base/log.h"
#include "runtime/engine/engine.h"
#include "runtime/server/api_server.h"
#include "runtime/server/http_server.h"
#include "tools/common/cli_args.h"

namespace {

using ft::ErrorCode;
using ft::Result;

static_assert(ft::kDefaultMaxBatch == 32, "kUsage states the default --max-batch");
constexpr const char* kUsage =
    "usage: ft-serve --model PATH [options]\n\n"
    "Serves a model over an OpenAI-compatible HTTP API:\n"
    "  POST /v1/chat/completions, /v1/completions (streaming and not), GET /v1/models,\n"
    "  GET /health, GET /metrics (Prometheus), POST /tokenize, /detokenize, /apply-template.\n\n"
    "  --model PATH              GGUF file or HF safetensors folder (required)\n"
    "  --device D                auto | cpu | cuda:N | hip:N (default auto: the first GPU, else the CPU)\n"
    "  --host H                  address to listen on (default 127.0.0.1; 0.0.0.0 for all)\n"
    "  --port N                  TCP port (default 8080; 0 picks a free one, printed in the log)\n"
    "  --ctx N                   context length per sequence (default: the model's, at most 8192)\n"
    "  --max-batch N             sequences decoded together (default 32; decode graphs per power of 2 up to it)\n"
    "  --prefill-chunk N         prompt tokens per sequence per step (default 512)\n"
    "  --max-queue N             waiting requests before new ones get 503 (default 256)\n"
    "  --kv-cache-mb N           KV cache size in MiB (default: from free device memory)\n"
    "  --api-key KEY             require 'Authorization: Bearer KEY' (all endpoints but /health)\n"
    "  --chat-template FILE      chat template to use instead of the model's\n"
    "  --served-model-name NAME  the model name clients send (default: the file name without .gguf)\n"
    "  --cors-origins LIST       browser origins allowed to call the server, comma-separated\n"
    "                            (\"http://localhost:3000\"), or \"*\" for any (default: none)\n"
    "  --reasoning-format F      auto | none: with auto (the default), a thinking model's <think> block\n"
    "                            comes back as reasoning_content; with none it stays in content\n"
    "  --version                 print the version\n"
    "  -h, --help                this help\n\n"
    "Environment: FT_LOG_LEVEL=debug|info|warn|error, FT_CACHE_DIR (compiled kernels).\n";

struct ServeConfig {
  ft::EngineOptions engine;
  ft::server::HttpServerOptions http;
  ft::server::ApiServerOptions api;
};

std::string default_served_name(const std::string& model_path) {
  std::filesystem::path p(model_path);
  while (!p.empty() && !p.has_filename()) p = p.parent_path();  // "dir/" -> "dir"
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}

Result<ServeConfig> parse_config(const ft::tools::CliArgs& a) {
  ServeConfig c;
  if (!a.positional().empty())
    return FT_ERROR(ErrorCode::kInvalidArgument, "unexpected argument '{}'", a.positional().front());
  if (!a.has("--model")) return FT_ERROR(ErrorCode::kInvalidArgument, "--model PATH is required");
  c.engine.model_path = a.get("--model");
  std::error_code ec;
  if (!std::filesystem::exists(c.engine.model_path, ec))
    return FT_ERROR(ErrorCode::kNotFound, "model not found: {}", c.engine.model_path);
  c.engine.device = a.get("--device", "auto");
  if (c.engine.device != "auto" && c.engine.device != "cpu" && c.engine.device.rfind("cuda:", 0) != 0 &&
      c.engine.device.rfind("hip:", 0) != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "--device must be auto, cpu, cuda:N or hip:N, got '{}'",
                    c.engine.device);
  FT_ASSIGN_OR_RETURN(int64_t port, a.get_int("--port", 8080));
  if (port < 0 || port > 65535) return FT_ERROR(ErrorCode::kInvalidArgument, "--port must be 0..65535, got {}", port);
  c.http.host = a.get("--host", "127.0.0.1");
  c.http.port = static_cast<int>(port);
  FT_ASSIGN_OR_RETURN(uint32_t max_batch, a.get_positive_u32("--max-batch", c.engine.max_batch));
  FT_ASSIGN_OR_RETURN(uint32_t max_queue, a.get_positive_u32("--max-queue", c.engine.max_queue));
  FT_ASSIGN_OR_RETURN(uint32_t chunk, a.get_positive_u32("--prefill-chunk", c.engine.prefill_chunk));
  c.engine.prefill_chunk = static_cast<int>(chunk);
  c.engine.max_batch = static_cast<int>(max_batch);
  c.engine.max_queue = static_cast<int>(max_queue);
  if (a.has("--ctx")) {
    FT_ASSIGN_OR_RETURN(uint32_t ctx, a.get_positive_u32("--ctx", 0));
    c.engine.max_context = static_cast<int>(ctx);
  }
  if (a.has("--kv-cache-mb")) {
    FT_ASSIGN_OR_RETURN(uint32_t mb, a.get_positive_u32("--kv-cache-mb", 0));
    c.engine.kv_cache_bytes = int64_t{mb} << 20;
  }
  if (a.has("--chat-template")) {
    c.engine.chat_template_path = a.get("--chat-template");
    if (!std::filesystem::exists(c.engine.chat_template_path, ec))
      return FT_ERROR(ErrorCode::kNotFound, "chat template not found: {}", c.engine.chat_template_path);
  }
  c.api.api_key = a.get("--api-key");
  c.api.served_model_name = a.get("--served-model-name", default_served_name(c.engine.model_path));
  const std::string reasoning = a.get("--reasoning-format", "auto");
  if (reasoning != "auto" && reasoning != "none")
    return FT_ERROR(ErrorCode::kInvalidArgument, "--reasoning-format must be auto or none, got '{}'", reasoning);
  c.api.split_reasoning = reasoning == "auto";
  if (a.has("--cors-origins")) {
    const std::string list = a.get("--cors-origins");
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      std::string origin = list.substr(start, comma - start);
      while (!origin.empty() && origin.front() == ' ') origin.erase(0, 1);
      while (!origin.empty() && origin.back() == ' ') origin.pop_back();
      while (!origin.empty() && origin.back() == '/') origin.pop_back();  // browsers send no trailing slash
      if (origin.empty() || (origin != "*" && origin.find("://") == std::string::npos))
        return FT_ERROR(ErrorCode::kInvalidArgument,
                        "--cors-origins takes origins like http://localhost:3000 or *, comma-separated; got '{}'", list);
      c.http.cors_origins.push_back(std::move(origin));
      start = comma + 1;
    }
  }
  return c;
}

// SIGINT/SIGTERM are blocked in every thread and taken here: the first stops
// the server cleanly, a second one quits at once (a model still loading
// cannot be interrupted).
void watch_signals(sigset_t signals, ft::server::HttpServer* http, std::atomic<bool>* stop_requested) {
  std::thread([signals, http, stop_requested] {
    int sig = 0;
    sigwait(&signals, &sig);
    ft::log::info("signal {}: stopping (again to quit at once)", sig);
    stop_requested->store(true);
    http->stop();
    sigwait(&signals, &sig);
    std::_Exit(128 + sig);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  ft::log::init_from_env();
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--version") {
      std::printf("ft-serve %s\n", FT_VERSION);
      return 0;
    }
  }
  auto args = ft::tools::CliArgs::parse(
      {.value_options = {"--model", "--device", "--host", "--port", "--ctx", "--max-batch", "--prefill-chunk", "--max-queue",
                         "--kv-cache-mb", "--api-key", "--chat-template", "--served-model-name", "--reasoning-format",
                         "--cors-origins"},
       .flags = {"--version"}},
      argc - 1, argv + 1);
  if (args.ok() && args->help()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Result<ServeConfig> config = args.ok() ? parse_config(*args) : Result<ServeConfig>(args.status());
  if (!config.ok()) {
    bool usage_error = config.status().code() == ErrorCode::kInvalidArgument;
    std::fprintf(stderr, "ft-serve: %s\n%s", config.status().user_message().c_str(), usage_error ? "\n" : "");
    if (usage_error) std::fputs(kUsage, stderr);
    return usage_error ? 2 : 1;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts, so all inherit it

  ft::server::ApiServer api(config->api);
  auto http = ft::server::HttpServer::listen(
      config->http, [&api](const ft::server::HttpRequest& r, ft::server::ResponseWriter& w) { api.handle(r, w); });
  if (!http.ok()) {
    std::fprintf(stderr, "ft-serve: %s\n", http.status().user_message().c_str());
    return 1;
  }
  std::atomic<bool> stop_requested{false};
  watch_signals(signals, http->get(), &stop_requested);
  ft::log::info("listening on http://{}:{} (model '{}' loading from {})", config->http.host, (*http)->port(),
                config->api.served_model_name, config->engine.model_path);
  std::thread serving([&] { (*http)->serve(); });

  // The engine logs its own progress; /health shows the latest line while loading.
  auto engine = ft::Engine::create(config->engine, [&api](const std::string& line) { api.set_progress(line); });
  int exit_code = 0;
  if (!engine.ok()) {
    ft::log::error("cannot load the model: {}", engine.status().to_string());
    exit_code = 1;
    (*http)->stop();
  } else if (!stop_requested.load()) {
    api.set_engine(engine->get());
    ft::log::info("ready: '{}' on {}, context {} tokens, http://{}:{}/v1", config->api.served_model_name,
                  (*engine)->device_name(), (*engine)->max_context(), config->http.host, (*http)->port());
  }
  serving.join();  // until a signal (or the failed load) stops the server; handlers have ended
  if (engine.ok()) engine->reset();
  ft::log::info("stopped");
  return exit_code;
}
