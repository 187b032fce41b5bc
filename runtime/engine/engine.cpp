#include "runtime/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/ranges.h>

#include "jit/compile_service.h"
#include "runtime/ops/op_session.h"
#include "runtime/base/log.h"
#include "jit/warm.h"
#include "runtime/engine/executor.h"
#include "runtime/engine/kernel_plan.h"
#include "runtime/engine/model_text.h"
#include "runtime/engine/json_constraint.h"
#include "runtime/engine/json_schema.h"
#include "runtime/engine/sampler.h"
#include "runtime/engine/scheduler.h"

namespace ft {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
    case FinishReason::kError: return "error";
    case FinishReason::kNone: break;
  }
  return "";
}

namespace {

using Clock = std::chrono::steady_clock;

// A request as the engine thread tracks it.
struct Active {
  Sequence seq;
  SamplingParams params;
  uint64_t seed = 0;
  int max_total = 0;  // prompt + max_tokens
  std::function<void(const RequestEvent&)> on_event;
  std::unique_ptr<StreamDecoder> decoder;
  std::string held;   // decoded text not yet sent (could start a stop string)
  std::unique_ptr<TokenConstraint> json;  // JSON mode's constraint, or null
  Clock::time_point submitted;
  double ttft_ms = -1;
  Clock::time_point first_token;
  // With params.prompt_logprobs: entry i is prompt token i + 1's, filled as
  // the prompt's rows come back (a recomputed prompt adds nothing twice).
  std::vector<TokenLogprob> prompt_logprobs;
  int prompt_scored = 0;  // prompt tokens 1 .. prompt_scored are in prompt_logprobs (or sent)
  bool wants_prompt_rows() const { return params.prompt_logprobs >= 0 && prompt_scored < seq.prompt_len - 1; }
};

class EngineImpl final : public Engine {
 public:
  ~EngineImpl() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  Status init(const EngineOptions& o, const std::function<void(const std::string&)>& progress) {
    auto say = [&](const std::string& line) {
      log::info("{}", line);
      if (progress) progress(line);
    };
    options_ = o;
    // The device (driver and context start-up, a few hundred ms on a GPU) opens
    // while the weights are mapped and the tokenizer is parsed.
    auto session = std::async(std::launch::async, [device = o.device] { return open_op_session(device); });
    FT_ASSIGN_OR_RETURN(weights_, WeightSet::open(o.model_path));
    config_ = weights_.config();
    FT_ASSIGN_OR_RETURN(Tokenizer tokenizer, load_model_tokenizer(o.model_path, weights_.gguf()));
    tokenizer_ = std::move(tokenizer);
    if (!o.chat_template_path.empty()) {
      FT_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::load(o.chat_template_path));
      // A bare template file names no special tokens; the model's tokenizer knows them.
      const std::pair<const char*, int32_t> specials[] = {
          {"bos_token", tokenizer_->bos_id()}, {"eos_token", tokenizer_->eos_id()}, {"pad_token", tokenizer_->pad_id()}};
      for (const auto& [name, id] : specials)
        if (id >= 0 && !t.has_special_token(name)) t.set_special_token(name, tokenizer_->token_string(id));
      template_ = std::move(t);
    } else if (auto t = load_model_chat_template(o.model_path, weights_.gguf()); t.ok()) {
      template_ = std::move(*t);
    } else {
      log::warn("{}: no chat template ({}); /v1/chat/completions needs --chat-template", o.model_path,
                t.status().message());
    }
    FT_ASSIGN_OR_RETURN(session_, session.get());
    backend_ = session_.backend.get();
    ops_ = session_.ops.get();
    jit_ = session_.jit.get();
    say(fmt::format("device {} ({})", backend_->info().name, backend_->info().arch));

    max_context_ = o.max_context > 0 ? o.max_context : static_cast<int>(std::min<uint32_t>(config_.max_positions ? config_.max_positions : 8192, 8192));
    if (config_.max_positions && static_cast<uint32_t>(max_context_) > config_.max_positions)
      return FT_ERROR(ErrorCode::kInvalidArgument, "--ctx {} exceeds the model's {} positions", max_context_, config_.max_positions);
    const int bs = o.kv_block_size;
    ExecutorOptions eo;
    eo.kv_block_size = bs;
    eo.max_seqs_per_step = o.max_batch;
    eo.max_tokens_per_step = std::max(o.prefill_chunk, o.max_batch);
    eo.max_blocks_per_seq = (max_context_ + bs - 1) / bs;
    eo.sample_vocab = valid_vocab();
    eo.skip_ops = o.skip_ops;
    eo.time_graph_replays = o.time_graph_replays;
    const DType act = backend_->kind() == DeviceKind::kCpu ? DType::kF32 : DType::kBF16;
    const int64_t per_block = static_cast<int64_t>(kv_block_bytes(config_, bs, act));
    int64_t kv_bytes = o.kv_cache_bytes;
    if (kv_bytes <= 0) {
      // Enough for every sequence of a full batch at the full context, within
      // a share of free memory (weights on GPUs are uploaded before this is known,
      // so the share is conservative there).
      FT_ASSIGN_OR_RETURN(int64_t free_bytes, backend_->free_bytes());
      const int64_t want = per_block * eo.max_blocks_per_seq * o.max_batch;
      const int64_t cap = backend_->kind() == DeviceKind::kCpu ? free_bytes / 4 : free_bytes / 2;
      kv_bytes = std::min(want, cap);
    }
    eo.kv_cache_bytes = kv_bytes;
    if (kv_bytes / per_block < eo.max_blocks_per_seq)
      return FT_ERROR(ErrorCode::kInvalidArgument,
                      "the KV cache ({} MiB) cannot hold one sequence of {} tokens; lower --ctx or give it more memory",
                      kv_bytes >> 20, max_context_);
    if (jit_) FT_RETURN_IF_ERROR(compile_plan(eo, say));
    say(fmt::format("loading {} ({} layers, hidden {}, vocab {})", o.model_path, config_.num_layers,
                    config_.hidden_size, config_.vocab_size));
    const auto load_start = Clock::now();
    FT_ASSIGN_OR_RETURN(executor_, Executor::create(backend_, ops_, weights_, eo));
    uint64_t weight_bytes = 0;
    for (const Weight& w : weights_.weights()) weight_bytes += w.data.size();
    say(fmt::format("weights: {:.2f} GiB {} in {:.2f} s", weight_bytes / 1073741824.0,
                    backend_->kind() == DeviceKind::kCpu ? "mapped" : "uploaded",
                    std::chrono::duration<double>(Clock::now() - load_start).count()));
    FT_RETURN_IF_ERROR(executor_->warm_up_graphs());
    if (GraphStats g = executor_->graph_stats(); !g.batch_buckets.empty())
      say(fmt::format("decode graphs: batch buckets {} captured in {:.0f} ms (longer contexts on first use)",
                      fmt::join(g.batch_buckets, " "), g.capture_ms));
    blocks_ = std::make_unique<BlockManager>(executor_->kv_layout().num_blocks, bs, o.prefix_caching);
    scheduler_ = std::make_unique<Scheduler>(
        blocks_.get(), SchedulerLimits{o.max_batch, eo.max_tokens_per_step, o.prefill_chunk});
    say(fmt::format("KV cache: {} blocks of {} tokens ({} MiB), context {}", blocks_->num_blocks(), bs,
                    (static_cast<int64_t>(blocks_->num_blocks()) * per_block) >> 20, max_context_));
    {
      std::lock_guard<std::mutex> lock(mu_);
      update_gauges();
    }
    eos_.insert(tokenizer_->eos_id());
    if (config_.eos_id) eos_.insert(*config_.eos_id);
    eos_.erase(-1);
    thread_ = std::thread([this] { loop(); });
    return Status();
  }

  // Compiles (or fetches) every kernel of the model's plan in parallel
  // before the first request, so no request waits for a compiler.
  Status compile_plan(const ExecutorOptions& eo, const std::function<void(const std::string&)>& say) {
    PlanOptions po{options_.max_batch, options_.prefill_chunk, eo.kv_block_size, max_context_};
    FT_ASSIGN_OR_RETURN(std::vector<KernelSpec> plan, plan_kernels(weights_, ops_->target(), po));
    say(fmt::format("kernels: {} needed for {} on {}", plan.size(), model_arch_name(config_.arch),
                    ops_->target().to_string()));
    size_t last_reported = 0;
    WarmResult r = warm_kernels(*jit_, ops_->target(), plan, [&](const WarmProgress& p) {
      if (!p.from_cache && (p.done - last_reported >= 10 || p.done == p.total)) {
        last_reported = p.done;
        say(fmt::format("compiling kernels {}/{}", p.done, p.total));
      }
    });
    for (const std::string& f : r.failures) log::error("{}", f);
    for (const std::string& s : r.spills) log::warn("{}: it runs, slower than its tile was planned for", s);
    if (r.failed > 0)
      return FT_ERROR(ErrorCode::kCompileError, "{} of {} kernels failed to compile for {} (first: {})", r.failed,
                      plan.size(), ops_->target().to_string(), r.failures.empty() ? "" : r.failures[0]);
    say(fmt::format("kernels ready: {} compiled, {} from the cache, in {:.2f} s", r.compiled, r.cached, r.seconds));
    return Status();
  }

  Result<uint64_t> submit(Request r) override {
    const int n = static_cast<int>(r.prompt.size());
    if (n == 0) return FT_ERROR(ErrorCode::kInvalidArgument, "the prompt is empty");
    if (n >= max_context_)
      return FT_ERROR(ErrorCode::kInvalidArgument, "the prompt has {} tokens; this model's context is {} (prompt and completion together)", n, max_context_);
    SamplingParams& p = r.sampling;
    if (p.max_tokens < 0) return FT_ERROR(ErrorCode::kInvalidArgument, "max_tokens must be positive");
    if (p.max_tokens > 0 && n + p.max_tokens > max_context_)
      return FT_ERROR(ErrorCode::kInvalidArgument, "prompt ({} tokens) plus max_tokens ({}) exceeds the context of {}", n,
                      p.max_tokens, max_context_);
    for (int32_t t : r.prompt)
      if (t < 0 || t >= static_cast<int32_t>(config_.vocab_size))
        return FT_ERROR(ErrorCode::kInvalidArgument, "token id {} is outside the vocabulary", t);
    for (auto [t, bias] : p.logit_bias)
      if (t < 0 || t >= static_cast<int32_t>(config_.vocab_size))
        return FT_ERROR(ErrorCode::kInvalidArgument, "logit_bias names token {}, outside the vocabulary", t);
    auto a = std::make_unique<Active>();
    if (p.json_schema) {
      a->json = json_schema_constraint(json_trie(), p.json_schema);
    } else if (p.json_object) {
      a->json = json_object_constraint(json_trie());
      if (!a->json->accept(p.json_prefix) || a->json->complete())
        return FT_ERROR(ErrorCode::kInvalidArgument, "the JSON prefix '{}' cannot start a JSON object", p.json_prefix);
    }
    if (p.prompt_logprobs > kMaxPromptLogprobs)
      return FT_ERROR(ErrorCode::kInvalidArgument, "prompt_logprobs must be at most {}", kMaxPromptLogprobs);
    a->seq.tokens = std::move(r.prompt);
    a->seq.prompt_len = n;
    a->params = p;
    a->seq.reuse_prefix = !a->wants_prompt_rows();
    a->seed = p.seed ? *p.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
    a->max_total = p.max_tokens > 0 ? n + p.max_tokens : max_context_;
    a->on_event = std::move(r.on_event);
    // The text continues the prompt: a SentencePiece tokenizer keeps the first token's space.
    a->decoder =
        std::make_unique<StreamDecoder>(*tokenizer_, DecodeOptions{.skip_special = true, .continuation = n > 0});
    a->submitted = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int>(incoming_.size()) + waiting_count_ >= options_.max_queue)
      return FT_ERROR(ErrorCode::kUnavailable, "the request queue is full ({} waiting)", options_.max_queue);
    const uint64_t id = ++next_id_;
    a->seq.id = id;
    incoming_.push_back(std::move(a));
    ++metrics_.requests_total;
    cv_.notify_all();
    return id;
  }

  void cancel(uint64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.insert(id);
    cv_.notify_all();
  }

  const ModelConfig& config() const override { return config_; }
  const Tokenizer& tokenizer() const override { return *tokenizer_; }
  const ChatTemplate* chat_template() const override { return template_ ? &*template_ : nullptr; }
  int max_context() const override { return max_context_; }
  std::string device_name() const override { return backend_->info().name; }
  EngineMetrics metrics() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return metrics_;
  }

 private:
  // The engine loop: take in requests, then schedule -> forward -> sample ->
  // postprocess, until there is nothing left to do.
  void loop() {
    while (true) {
      if (!take_requests()) return;
      std::vector<ScheduledSeq> step = scheduler_->schedule();
      if (step.empty()) continue;
      Batch batch = make_batch(step);
      StepOutput out;
      const auto t0 = Clock::now();
      Status s = executor_->forward(batch, out);
      if (!s.ok()) {
        log::error("forward pass failed: {}", s.to_string());
        for (const ScheduledSeq& x : step) finish(active_.at(x.seq->id).get(), FinishReason::kError, s.message());
        continue;
      }
      // Logits rows come back in batch order: every row of an all_logits
      // sequence (prompt logprobs; its last is the drawn token's when it
      // draws), the last row of a host_logits one.
      const size_t vocab = config_.vocab_size;
      auto row_at = [&](size_t r) { return std::span<const float>(out.logits.data() + r * vocab, vocab); };
      std::vector<size_t> first_row(step.size());
      for (size_t i = 0, row = 0; i < step.size(); ++i) {
        const BatchSeq& q = batch.seqs[i];
        first_row[i] = row;
        row += q.all_logits ? q.n_tokens : q.want_logits && q.host_logits ? 1 : 0;
        if (q.all_logits)
          collect_prompt_logprobs(active_.at(step[i].seq->id).get(), step[i].seq->num_computed, q.n_tokens,
                                  [&](int j) { return row_at(first_row[i] + j); });
      }
      scheduler_->postprocess(step);
      size_t token = 0;
      int decoded = 0;
      for (size_t i = 0; i < step.size(); ++i) {
        const BatchSeq& q = batch.seqs[i];
        if (!q.want_logits) continue;
        Active* a = active_.at(step[i].seq->id).get();
        SampleOutput chosen;
        chosen.token = out.tokens[token++];
        if (q.host_logits) chosen = sample_on_host(a, row_at(first_row[i] + (q.all_logits ? q.n_tokens - 1 : 0)));
        emit_token(a, chosen);
        ++decoded;
      }
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(mu_);
      if (secs > 0 && decoded > 0 && static_cast<int>(batch.tokens.size()) == decoded)
        metrics_.decode_tokens_per_s_last = decoded / secs;
      if (options_.time_graph_replays) {
        const GraphStats g = executor_->graph_stats();
        metrics_.graph_replays_timed = g.timed_replays;
        metrics_.graph_replay_gpu_ms = g.replay_gpu_ms;
      }
      update_gauges();
    }
  }

  // Moves submitted requests in and applies cancellations; waits while idle.
  // False when the engine is stopping.
  bool take_requests() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stopping_ || !incoming_.empty() || !cancelled_.empty() || !scheduler_->idle(); });
    if (stopping_) return false;
    for (auto& a : incoming_) {
      Active* raw = a.get();
      active_.emplace(raw->seq.id, std::move(a));
      scheduler_->add(&raw->seq);
    }
    incoming_.clear();
    std::set<uint64_t> cancelled;
    cancelled.swap(cancelled_);
    update_gauges();
    lock.unlock();
    for (uint64_t id : cancelled)
      if (auto it = active_.find(id); it != active_.end()) finish(it->second.get(), FinishReason::kAbort, "");
    return true;
  }

  void update_gauges() {
    metrics_.running = scheduler_->running();
    waiting_count_ = scheduler_->waiting();
    metrics_.waiting = waiting_count_ + static_cast<int>(incoming_.size());
    metrics_.kv_blocks_total = blocks_->num_blocks();
    metrics_.kv_blocks_used = blocks_->used_blocks();
    metrics_.preemptions_total = scheduler_->preemptions();
  }

  Batch make_batch(const std::vector<ScheduledSeq>& step) {
    Batch b;
    const int bs = blocks_->block_size();
    for (const ScheduledSeq& x : step) {
      const Sequence& s = *x.seq;
      for (int i = 0; i < x.n_tokens; ++i) {
        const int pos = s.num_computed + i;
        b.tokens.push_back(s.tokens[pos]);
        b.positions.push_back(pos);
        b.slots.push_back(s.blocks[pos / bs] * bs + pos % bs);
      }
      BatchSeq q;
      q.n_tokens = x.n_tokens;
      q.context_len = s.num_computed + x.n_tokens;
      q.block_table = s.blocks.data();
      q.n_blocks = static_cast<int>(s.blocks.size());
      q.want_logits = q.context_len == static_cast<int>(s.tokens.size());
      const Active& a = *active_.at(s.id);
      // Prompt logprobs: the rows of prompt positions not yet scored.
      q.all_logits = a.wants_prompt_rows() && s.num_computed < s.prompt_len - 1;
      if (q.want_logits) {
        q.host_logits = needs_host_logits(a.params);
        q.sampling = device_sampling(a);
      }
      b.seqs.push_back(q);
    }
    return b;
  }

  // The host draws when it must see the logits: penalties, biases and logprobs.
  static bool needs_host_logits(const SamplingParams& p) {
    return p.logprobs >= 0 || p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f ||
           p.frequency_penalty != 0.0f || !p.logit_bias.empty() || p.json_object || p.json_schema;
  }

  // The vocabulary's byte trie for JSON mode and structured outputs, built on first use (from any
  // submitting thread) and shared by every request after.
  std::shared_ptr<const TokenTrie> json_trie() {
    std::call_once(json_trie_once_, [&] {
      const auto start = Clock::now();
      json_trie_ = std::make_shared<const TokenTrie>(*tokenizer_, valid_vocab());
      log::info("JSON mode: vocabulary trie built in {:.0f} ms",
                std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    });
    return json_trie_;
  }

  int valid_vocab() const { return std::min<int>(tokenizer_->vocab_size(), static_cast<int>(config_.vocab_size)); }

  // The device's draw for a request: the same seeded algorithm as the host's.
  static SamplingRow device_sampling(const Active& a) {
    const SamplingParams& p = a.params;
    return SamplingRow{.temperature = p.temperature, .top_k = p.top_k, .top_p = p.top_p, .min_p = p.min_p,
                       .seed = a.seed, .step = static_cast<uint64_t>(a.seq.tokens.size() - a.seq.prompt_len)};
  }

  SampleOutput sample_on_host(const Active* a, std::span<const float> logits) const {
    const Sequence& s = a->seq;
    SampleInput in;
    in.logits = logits;
    in.valid_vocab = valid_vocab();
    in.params = &a->params;
    in.seed = a->seed;
    in.step = static_cast<uint64_t>(s.tokens.size() - s.prompt_len);
    in.prompt = std::span<const int32_t>(s.tokens).first(s.prompt_len);
    in.output = std::span<const int32_t>(s.tokens).subspan(s.prompt_len);
    if (a->json) in.allowed = a->json->allowed();
    return sample_token(in);
  }

  // Scores prompt tokens from the rows of positions pos0 .. pos0 + n - 1
  // (row(j) is position pos0 + j's logits, which predict token pos0 + j + 1).
  template <typename RowFn>
  void collect_prompt_logprobs(Active* a, int pos0, int n, RowFn row) {
    const Sequence& s = a->seq;
    for (int j = 0; j < n; ++j) {
      const int pos = pos0 + j;
      if (pos + 1 >= s.prompt_len) break;
      if (pos != a->prompt_scored) continue;  // scored before a preemption
      a->prompt_logprobs.push_back(token_logprob(row(j), valid_vocab(), s.tokens[pos + 1], a->params.prompt_logprobs));
      ++a->prompt_scored;
    }
    if (!a->wants_prompt_rows()) a->seq.reuse_prefix = true;  // a recompute after preemption may reuse
  }

  void emit_token(Active* a, const SampleOutput& out) {
    Sequence& s = a->seq;
    s.tokens.push_back(out.token);

    RequestEvent ev;
    const bool first = static_cast<int>(s.tokens.size()) == s.prompt_len + 1;
    if (first && a->params.prompt_logprobs >= 0) ev.prompt_logprobs = std::move(a->prompt_logprobs);
    ev.tokens.push_back(out.token);
    if (a->params.logprobs >= 0) ev.logprobs.push_back(out.logprob);
    if (a->ttft_ms < 0) {
      a->first_token = Clock::now();
      a->ttft_ms = std::chrono::duration<double, std::milli>(a->first_token - a->submitted).count();
      std::lock_guard<std::mutex> lock(mu_);
      metrics_.ttft_ms_sum += a->ttft_ms;
      ++metrics_.ttft_count;
    }
    FinishReason reason = FinishReason::kNone;
    const bool is_eos = !a->params.ignore_eos && eos_.count(out.token);
    const bool is_stop_id = std::find(a->params.stop_token_ids.begin(), a->params.stop_token_ids.end(), out.token) !=
                            a->params.stop_token_ids.end();
    if (is_eos || is_stop_id) {
      reason = FinishReason::kStop;
    } else {
      auto text = a->decoder->push(out.token);
      if (text.ok()) a->held += *text;
      if (static_cast<int>(s.tokens.size()) >= a->max_total) reason = FinishReason::kLength;
      // JSON mode, structured outputs: the token that closes the value ends the answer.
      if (a->json) {
        const std::string_view bytes = tokenizer_->token_bytes(out.token);
        if (a->json->accept(bytes) && a->json->complete()) reason = FinishReason::kStop;
      }
    }
    if (reason != FinishReason::kNone && !is_eos && !is_stop_id) a->held += a->decoder->finish();
    // Stop strings: cut at the first match; otherwise hold back any tail that
    // could still grow into one.
    size_t cut = std::string::npos;
    for (const std::string& stop : a->params.stop)
      if (!stop.empty())
        if (size_t at = a->held.find(stop); at != std::string::npos) cut = std::min(cut, at);
    if (cut != std::string::npos) {
      a->held.resize(cut);
      reason = FinishReason::kStop;
    }
    size_t keep = 0;
    if (reason == FinishReason::kNone)
      for (const std::string& stop : a->params.stop)
        for (size_t k = std::min(stop.size() - (stop.empty() ? 0 : 1), a->held.size()); k > keep; --k)
          if (a->held.compare(a->held.size() - k, k, stop, 0, k) == 0) {
            keep = k;
            break;
          }
    ev.text = a->held.substr(0, a->held.size() - keep);
    a->held.erase(0, a->held.size() - keep);
    if (reason != FinishReason::kNone) {
      finish(a, reason, "", &ev);
      return;
    }
    fill_usage(a, ev);
    if (a->on_event) a->on_event(ev);
  }

  void fill_usage(const Active* a, RequestEvent& ev) const {
    ev.prompt_tokens = a->seq.prompt_len;
    ev.completion_tokens = static_cast<int>(a->seq.tokens.size()) - a->seq.prompt_len;
    ev.cached_prompt_tokens = a->seq.cached_prompt_tokens;
    ev.time_to_first_token_ms = std::max(a->ttft_ms, 0.0);
  }

  // Ends a request: final event, blocks freed, metrics.
  void finish(Active* a, FinishReason reason, const std::string& error, RequestEvent* last = nullptr) {
    RequestEvent ev = last ? std::move(*last) : RequestEvent{};
    ev.finish = reason;
    ev.error = error;
    if (reason == FinishReason::kAbort || reason == FinishReason::kError) ev.text += std::exchange(a->held, "");
    fill_usage(a, ev);
    scheduler_->remove(&a->seq);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++metrics_.requests_finished;
      metrics_.prompt_tokens_total += ev.prompt_tokens;
      metrics_.generation_tokens_total += ev.completion_tokens;
      metrics_.cached_prompt_tokens_total += ev.cached_prompt_tokens;
      update_gauges();
    }
    const double gen_secs =
        a->ttft_ms >= 0 ? std::chrono::duration<double>(Clock::now() - a->first_token).count() : 0.0;
    log::debug("request {} {}: {} prompt tokens ({} cached), {} completion tokens, first token {:.1f} ms, {:.1f} tok/s",
              a->seq.id, finish_reason_name(reason), ev.prompt_tokens, ev.cached_prompt_tokens, ev.completion_tokens,
              ev.time_to_first_token_ms, gen_secs > 0 ? (ev.completion_tokens - 1) / gen_secs : 0.0);
    auto callback = std::move(a->on_event);
    active_.erase(a->seq.id);
    if (callback) callback(ev);
  }

  EngineOptions options_;
  WeightSet weights_;
  ModelConfig config_;
  std::optional<Tokenizer> tokenizer_;
  std::optional<ChatTemplate> template_;
  OpSession session_;
  Backend* backend_ = nullptr;
  OpContext* ops_ = nullptr;
  CompileService* jit_ = nullptr;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<BlockManager> blocks_;
  std::unique_ptr<Scheduler> scheduler_;
  std::set<int32_t> eos_;
  int max_context_ = 0;
  std::once_flag json_trie_once_;
  std::shared_ptr<const TokenTrie> json_trie_;

  // Engine-thread state.
  std::map<uint64_t, std::unique_ptr<Active>> active_;

  // Shared with submitters, under mu_.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Active>> incoming_;
  std::set<uint64_t> cancelled_;
  uint64_t next_id_ = 0;
  int waiting_count_ = 0;
  bool stopping_ = false;
  EngineMetrics metrics_;
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(const EngineOptions& options,
                                               std::function<void(const std::string&)> progress) {
  if (options.max_batch < 1 || options.prefill_chunk < 1 || options.kv_block_size < 1 || options.max_queue < 1)
    return FT_ERROR(ErrorCode::kInvalidArgument, "engine: batch, chunk, block size and queue must be positive");
  auto engine = std::make_unique<EngineImpl>();
  FT_RETURN_IF_ERROR(engine->init(options, progress));
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace ft
