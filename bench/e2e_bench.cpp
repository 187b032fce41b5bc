// e2e_bench: the engine end to end on one model, as ft-serve runs it (the
// same Engine, minus HTTP): time to ready, prefill of a long prompt, decode at
// batch 1 and with many concurrent sequences. Each figure is printed next to
// its floor (weight bytes over the device's measured copy bandwidth for
// decode; dense bf16 matrix peak for prefill) and, with --peer FILE, next to
// HF transformers measured in the same run (bench/hf_reference.py writes it).
//
// Usage: e2e_bench --model PATH [--device cuda:0] [--peer FILE] [--batch 32]
//                  [--decode-tokens 128] [--prefill 2048] [--only-b1] [--skip-ops OP,...]
//                  [--step-times]
//
// --step-times times each decode graph replay on the device too (one more
// wait per step) and prints, for batch 1 and the batch, the device's time
// per step beside the time between steps: the difference is what the host,
// the launch and the tokens' read-back add to each step.
// --skip-ops (timing experiments; the output is wrong) leaves the named
// per-layer ops out of every step (attn_norm qkv rope attn o ffn_norm
// gate_up down): the speed gained bounds what each costs a step.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "bench/bench_util.h"
#include "runtime/engine/engine.h"
#include "runtime/model/weights.h"

namespace ft {
namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Options {
  std::string model, device = "cuda:0", peer;
  int batch = 32, decode_tokens = 128, prefill = 2048;
  bool only_b1 = false, step_times = false;
  std::vector<std::string> skip_ops;
};

// Runs requests to completion and records when each token arrived.
struct Trace {
  std::vector<std::vector<Clock::time_point>> token_times;
  std::vector<std::string> errors;
};

Trace run_requests(Engine& engine, const std::vector<std::vector<int32_t>>& prompts, int max_tokens) {
  Trace trace;
  trace.token_times.resize(prompts.size());
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Request r;
    r.prompt = prompts[i];
    r.sampling.temperature = 0;
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    r.on_event = [&, i](const RequestEvent& ev) {
      std::lock_guard<std::mutex> lock(mu);
      for (size_t k = 0; k < ev.tokens.size(); ++k) trace.token_times[i].push_back(Clock::now());
      if (ev.finish != FinishReason::kNone) {
        if (ev.finish == FinishReason::kError) trace.errors.push_back(ev.error);
        ++finished;
        cv.notify_all();
      }
    };
    auto id = engine.submit(std::move(r));
    if (!id.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      trace.errors.push_back(id.status().to_string());
      ++finished;
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return finished == prompts.size(); });
  return trace;
}

std::vector<int32_t> random_prompt(std::mt19937& rng, int n) {
  std::vector<int32_t> p(n);
  for (auto& t : p) t = static_cast<int32_t>(rng() % 150000);
  return p;
}

// Decode tokens per second over the window where every sequence is past its
// first token and none has finished.
double decode_rate(const Trace& t) {
  Clock::time_point start = Clock::time_point::min(), end = Clock::time_point::max();
  for (const auto& times : t.token_times) {
    if (times.size() < 2) return 0;
    start = std::max(start, times.front());
    end = std::min(end, times.back());
  }
  if (end <= start) return 0;
  size_t tokens = 0;
  for (const auto& times : t.token_times)
    tokens += std::count_if(times.begin(), times.end(), [&](auto x) { return x > start && x <= end; });
  return tokens / secs(start, end);
}

std::map<std::string, double> read_peer(const std::string& path) {
  std::map<std::string, double> m;
  std::ifstream in(path);
  std::string key;
  double v;
  while (in >> key >> v) m[key] = v;
  return m;
}

int run(const Options& o) {
  // The floors: bytes read per decode step, the device's copy bandwidth.
  auto weights = WeightSet::open(o.model);
  if (!weights.ok()) {
    std::fprintf(stderr, "e2e_bench: %s\n", weights.status().to_string().c_str());
    return 2;
  }
  uint64_t weight_bytes = 0, params = 0;
  for (const Weight& w : weights->weights()) {
    weight_bytes += w.data.size();
    uint64_t n = 1;
    for (uint64_t d : w.shape) n *= d;
    params += n;
  }
  const ModelConfig cfg = weights->config();
  double bw = 0;
  {
    auto b = open_backend(o.device);
    if (!b.ok()) {
      std::fprintf(stderr, "e2e_bench: %s\n", b.status().to_string().c_str());
      return 2;
    }
    auto g = bench::copy_bandwidth_gbs(**b, 1ull << 30);
    bw = g.ok() ? *g * 1e9 : 0;
  }

  const auto t0 = Clock::now();
  EngineOptions eo;
  eo.model_path = o.model;
  eo.device = o.device;
  eo.max_batch = o.batch;
  eo.prefill_chunk = o.prefill;
  eo.max_context = std::max(o.prefill + 16, 4096);
  eo.prefix_caching = false;  // every run computes its whole prompt
  eo.skip_ops = o.skip_ops;
  eo.time_graph_replays = o.step_times;
  if (!o.skip_ops.empty())
    std::printf("skipping %s in every layer: timing only, the output is wrong\n",
                fmt::format("{}", fmt::join(o.skip_ops, ", ")).c_str());
  auto engine = Engine::create(eo, [&](const std::string& line) {
    std::printf("[%7.2f s] %s\n", secs(t0, Clock::now()), line.c_str());
    std::fflush(stdout);
  });
  if (!engine.ok()) {
    std::fprintf(stderr, "e2e_bench: %s\n", engine.status().to_string().c_str());
    return 1;
  }
  const double ready_s = secs(t0, Clock::now());
  Engine& e = **engine;
  std::mt19937 rng(42);
  std::map<std::string, double> got;

  // --step-times: the device's time per decode graph replay beside the time
  // between steps (batch / total tokens per second).
  const auto step_times = [&](const char* label, const EngineMetrics& before, int batch, double rate) {
    const EngineMetrics after = e.metrics();
    if (!o.step_times || after.graph_replays_timed <= before.graph_replays_timed || rate <= 0) return;
    const double gpu_us = 1e3 * (after.graph_replay_gpu_ms - before.graph_replay_gpu_ms) /
                          (after.graph_replays_timed - before.graph_replays_timed);
    const double step_us = 1e6 * batch / rate;
    std::printf("%s: %.1f us between steps, %.1f us of it the step's graph on the device (%.1f%%): "
                "%.1f us for the host, the launch and the tokens' read-back\n",
                label, step_us, gpu_us, 100 * gpu_us / step_us, step_us - gpu_us);
  };

  // Warm-up: one short request (first use of the prefill and decode paths).
  run_requests(e, {random_prompt(rng, 64)}, 8);
  {
    const EngineMetrics before = e.metrics();
    Trace t = run_requests(e, {random_prompt(rng, 32)}, o.decode_tokens * 2);
    got["decode_b1"] = decode_rate(t);
    step_times("decode b1", before, 1, got["decode_b1"]);
  }
  if (!o.only_b1) {
    std::vector<std::vector<int32_t>> prompts;
    for (int i = 0; i < o.batch; ++i) prompts.push_back(random_prompt(rng, 32));
    run_requests(e, prompts, 4);  // the larger buckets' first use
    const EngineMetrics before = e.metrics();
    Trace t = run_requests(e, prompts, o.decode_tokens);
    if (!t.errors.empty()) std::fprintf(stderr, "e2e_bench: %s\n", t.errors[0].c_str());
    const std::string key = "decode_b" + std::to_string(o.batch);
    got[key] = decode_rate(t);
    step_times(("decode b" + std::to_string(o.batch)).c_str(), before, o.batch, got[key]);
    std::vector<double> rates;
    for (int rep = 0; rep < 3; ++rep) {
      const auto s = Clock::now();
      Trace p = run_requests(e, {random_prompt(rng, o.prefill)}, 1);
      if (!p.token_times[0].empty()) rates.push_back(o.prefill / secs(s, p.token_times[0][0]));
    }
    std::sort(rates.begin(), rates.end());
    got["prefill_" + std::to_string(o.prefill)] = rates.empty() ? 0 : rates[rates.size() / 2];
  }

  const std::map<std::string, double> peer = o.peer.empty() ? std::map<std::string, double>{} : read_peer(o.peer);
  const double step_floor = bw > 0 ? weight_bytes / bw : 0;  // s per decode step
  const double peak_flops = 753e12;                           // cuBLAS bf16 GEMM on the H200 (PERFORMANCE.md)
  std::printf("\nmodel %s: %s, %u layers, %.2f B parameters, %.2f GiB of weights; copy bandwidth %.0f GB/s\n",
              o.model.c_str(), model_arch_name(cfg.arch), cfg.num_layers, params / 1e9, weight_bytes / 1073741824.0,
              bw / 1e9);
  std::printf("ready in %.2f s (start of Engine::create to ready, weights included)\n\n", ready_s);
  std::printf("%-14s %12s %12s %8s %12s %8s\n", "figure", "ft tok/s", "floor tok/s", "of floor", "HF tok/s", "vs HF");
  for (const auto& [k, v] : got) {
    double floor = 0;
    if (k == "decode_b1" && step_floor > 0) floor = 1 / step_floor;
    else if (k.starts_with("decode_b") && step_floor > 0) floor = o.batch / step_floor;
    else if (k.starts_with("prefill")) floor = peak_flops / (2.0 * params);
    const auto p = peer.find(k);
    std::printf("%-14s %12.1f %12.1f %7.0f%% %12s %8s\n", k.c_str(), v, floor, floor > 0 ? 100 * v / floor : 0.0,
                p != peer.end() ? fmt::format("{:.1f}", p->second).c_str() : "-",
                p != peer.end() ? fmt::format("{:.1f}x", v / p->second).c_str() : "-");
  }
  return 0;
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) {
  ft::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "e2e_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--model") o.model = value();
    else if (a == "--device") o.device = value();
    else if (a == "--peer") o.peer = value();
    else if (a == "--batch") o.batch = std::atoi(value().c_str());
    else if (a == "--decode-tokens") o.decode_tokens = std::atoi(value().c_str());
    else if (a == "--prefill") o.prefill = std::atoi(value().c_str());
    else if (a == "--only-b1") o.only_b1 = true;
    else if (a == "--step-times") o.step_times = true;
    else if (a == "--skip-ops") {
      const std::string list = value();
      for (size_t at = 0; at <= list.size();) {
        const size_t end = std::min(list.find(',', at), list.size());
        if (end > at) o.skip_ops.push_back(list.substr(at, end - at));
        at = end + 1;
      }
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: e2e_bench --model PATH [--device cuda:0] [--peer FILE] [--batch 32] [--decode-tokens 128]\n"
                  "                 [--prefill 2048] [--only-b1] [--skip-ops OP,...] [--step-times]\n"
                  "  --skip-ops    timing only (the output is wrong): leave these per-layer ops out of every step\n"
                  "                (attn_norm qkv rope attn o ffn_norm gate_up down)\n"
                  "  --step-times  also time each decode graph on the device (one more wait per step) and print,\n"
                  "                at batch 1 and the batch, its time beside the time between steps\n");
      return 0;
    } else {
      std::fprintf(stderr, "e2e_bench: unknown argument %s (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.model.empty() || o.batch < 1 || o.decode_tokens < 2 || o.prefill < 1) {
    std::fprintf(stderr, "e2e_bench: --model is required; batch, decode tokens and prefill must be positive\n");
    return 2;
  }
  return ft::run(o);
}
