#include "tools/ft_model/model_commands.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/base/files.h"
#include "runtime/model/gguf_reader.h"
#include "runtime/model/hf_convert.h"
#include "runtime/model/model_config.h"
#include "runtime/model/safetensors.h"
#include "runtime/model/synth.h"
#include "runtime/model/tensor_names.h"
#include "tools/common/cli_args.h"

namespace ft::tools {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kInfoHelp =
    "usage: ft-model info FILE|DIR [--json]\n\n"
    "Shows a model file: format, metadata, tensors (type, shape, size) and the model config.\n"
    "FILE is a .gguf or .safetensors file; DIR a safetensors model folder.\n\n"
    "  --json   machine-readable output (long arrays are summarised)\n";

constexpr const char* kConvertHelp =
    "usage: ft-model convert DIR -o OUT.gguf [--type TYPE] [--quiet]\n\n"
    "Converts an HF safetensors folder (config.json, model.safetensors[.index.json], tokenizer.json,\n"
    "tokenizer_config.json) into one GGUF file with the config, tokenizer and chat template.\n\n"
    "  -o, --output OUT   the GGUF file to write (written atomically)\n"
    "  --type TYPE        f32 | f16 | bf16 | q8_0 | q4_0 | q4_k_m | q5_k_m | q6_k   (default f16)\n"
    "  --quiet            no progress on stderr\n";

constexpr const char* kSynthHelp =
    "usage: ft-model synth --arch qwen3|qwen2|llama --vocab-from tokenizer.json -o OUT.gguf [options]\n\n"
    "Writes a small random-weight model that carries a real tokenizer, for tests and demos.\n\n"
    "  --layers N          transformer blocks (default 2)\n"
    "  --hidden N          hidden size (default 256)\n"
    "  --intermediate N    feed-forward size (default 512)\n"
    "  --heads N           attention heads (default 4)\n"
    "  --kv-heads N        key/value heads (default 2)\n"
    "  --head-dim N        per-head size (default 64)\n"
    "  --context N         context length (default 4096)\n"
    "  --vocab-from FILE   tokenizer.json; the vocabulary size is its size including added tokens\n"
    "  --tokenizer-config FILE  tokenizer_config.json: chat template and special tokens; tokenizer.json\n"
    "                      and tokenizer_config.json are then also copied beside OUT\n"
    "  --tied              tie the output matrix to the embeddings\n"
    "  --type TYPE         as for convert (default f16)\n"
    "  --seed S            random seed (default 0)\n"
    "  -o, --output OUT    the GGUF file to write\n";

// The arguments after the subcommand name (argv[0]).
Result<CliArgs> parse_command(int argc, char** argv, const CliSpec& spec) {
  return CliArgs::parse(spec, argc - 1, argv + 1);
}

// ---- info ----------------------------------------------------------------

json value_json(const GgufValue& v) {
  if (const auto* s = v.get_if<std::string>()) return *s;
  if (const auto* b = v.get_if<bool>()) return *b;
  if (auto f = v.to_float(); f.ok()) return *f;
  if (const GgufArray* a = v.array()) {
    constexpr size_t kMaxItems = 16;
    json items = json::array();
    std::visit(
        [&](const auto& vec) {
          using E = typename std::decay_t<decltype(vec)>::value_type;
          for (size_t i = 0; i < vec.size() && i < kMaxItems; ++i) {
            if constexpr (std::is_same_v<E, GgufValue>) items.push_back(value_json(vec[i]));
            else if constexpr (std::is_same_v<E, uint8_t>)
              items.push_back(a->elem_type == GgufType::kBool ? json(vec[i] != 0) : json(vec[i]));
            else items.push_back(vec[i]);
          }
        },
        a->items);
    if (a->size() <= kMaxItems) return items;
    return json{{"type", gguf_type_name(a->elem_type)}, {"length", a->size()}, {"first", items}};
  }
  if (auto u = v.to_uint(); u.ok()) return *u;
  return v.to_int().value();
}

json config_json(const ModelConfig& c) {
  json j = {{"arch", model_arch_name(c.arch)},
            {"vocab_size", c.vocab_size},
            {"hidden_size", c.hidden_size},
            {"intermediate_size", c.intermediate_size},
            {"layers", c.num_layers},
            {"heads", c.num_heads},
            {"kv_heads", c.num_kv_heads},
            {"head_dim", c.head_dim},
            {"rms_norm_eps", c.rms_norm_eps},
            {"rope_theta", c.rope_theta},
            {"rope_style", rope_style_name(c.rope_style)},
            {"rope_scaling", rope_scaling_name(c.rope_scaling.type)},
            {"max_positions", c.max_positions},
            {"tied_embeddings", c.tied_embeddings},
            {"qkv_bias", c.qkv_bias},
            {"qk_norm", c.qk_norm}};
  if (c.rope_scaling.type != RopeScalingType::kNone) j["rope_scaling_factor"] = c.rope_scaling.factor;
  if (c.bos_id) j["bos_id"] = *c.bos_id;
  if (c.eos_id) j["eos_id"] = *c.eos_id;
  return j;
}

std::string config_text(const ModelConfig& c) {
  return fmt::format(
      "{}: {} layers, hidden {}, ffn {}, heads {}/{} kv, head_dim {}, vocab {}, rope {} theta {} scaling {}, "
      "context {}{}{}{}",
      model_arch_name(c.arch), c.num_layers, c.hidden_size, c.intermediate_size, c.num_heads, c.num_kv_heads,
      c.head_dim, c.vocab_size, rope_style_name(c.rope_style), c.rope_theta, rope_scaling_name(c.rope_scaling.type),
      c.max_positions, c.tied_embeddings ? ", tied embeddings" : "", c.qkv_bias ? ", qkv bias" : "",
      c.qk_norm ? ", qk norm" : "");
}

std::string human_bytes(uint64_t n) {
  if (n >= (1ull << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(n) / (1ull << 30));
  if (n >= (1ull << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(n) / (1ull << 20));
  if (n >= (1ull << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / (1ull << 10));
  return fmt::format("{} B", n);
}

int info_gguf(const std::string& path, bool as_json) {
  auto reader = GgufReader::open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "ft-model info: %s\n", reader.status().message().c_str());
    return 1;
  }
  const GgufReader& g = *reader;
  auto config = config_from_gguf(g);
  uint64_t total = 0;
  for (const auto& t : g.tensors()) total += t.n_bytes;
  if (as_json) {
    json j = {{"path", path},         {"format", "gguf"},       {"version", g.version()},
              {"alignment", g.alignment()}, {"data_offset", g.data_offset()}, {"file_size", g.file_size()},
              {"tensor_bytes", total}};
    json meta = json::object();
    for (const auto& [k, v] : g.metadata()) meta[k] = value_json(v);
    j["metadata"] = meta;
    json tensors = json::array();
    for (const auto& t : g.tensors())
      tensors.push_back({{"name", t.name}, {"type", ggml_type_name(t.type)}, {"shape", t.shape},
                         {"bytes", t.n_bytes}, {"offset", t.offset},
                         {"supported", ggml_traits(t.type).supported}});
    j["tensors"] = tensors;
    if (config.ok()) j["config"] = config_json(*config);
    else j["config_error"] = config.status().message();
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: GGUF v%u, %s, %zu tensors (%s), alignment %llu, data at offset %llu\n", path.c_str(), g.version(),
              human_bytes(g.file_size()).c_str(), g.tensors().size(), human_bytes(total).c_str(),
              static_cast<unsigned long long>(g.alignment()), static_cast<unsigned long long>(g.data_offset()));
  std::printf("\nmetadata (%zu keys):\n", g.metadata().size());
  for (const auto& [k, v] : g.metadata()) std::printf("  %s = %s\n", k.c_str(), v.to_string().c_str());
  std::printf("\ntensors:\n");
  for (const auto& t : g.tensors()) {
    std::printf("  %-36s %-8s %-20s %12s%s\n", t.name.c_str(), std::string(ggml_type_name(t.type)).c_str(),
                shape_string(t.shape).c_str(), human_bytes(t.n_bytes).c_str(),
                ggml_traits(t.type).supported ? "" : "  (type not supported by ft)");
  }
  if (config.ok()) std::printf("\nmodel: %s\n", config_text(*config).c_str());
  else std::printf("\nmodel: not usable by ft: %s\n", config.status().message().c_str());
  return 0;
}

int info_safetensors(const std::string& path, bool is_dir, bool as_json) {
  std::vector<SafetensorsFile> files;
  if (is_dir) {
    auto model = SafetensorsModel::open_dir(path);
    if (!model.ok()) {
      std::fprintf(stderr, "ft-model info: %s\n", model.status().message().c_str());
      return 1;
    }
    files = model->files();
  } else {
    auto file = SafetensorsFile::open(path);
    if (!file.ok()) {
      std::fprintf(stderr, "ft-model info: %s\n", file.status().message().c_str());
      return 1;
    }
    files.push_back(std::move(file).value());
  }
  std::optional<Result<ModelConfig>> config;
  const std::string config_path = (is_dir ? fs::path(path) : fs::path(path).parent_path()) / "config.json";
  if (auto text = read_file(config_path); text.ok()) config = config_from_hf_json(*text);
  json tensors = json::array();
  uint64_t total = 0;
  for (const auto& f : files) {
    for (const auto& t : f.tensors()) {
      total += t.end - t.begin;
      tensors.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"bytes", t.end - t.begin},
                         {"file", fs::path(f.path()).filename().string()}, {"supported", t.type.has_value()}});
    }
  }
  if (as_json) {
    json j = {{"path", path}, {"format", "safetensors"}, {"files", files.size()}, {"tensor_bytes", total},
              {"tensors", tensors}};
    if (config && config->ok()) j["config"] = config_json(config->value());
    else if (config) j["config_error"] = config->status().message();
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: safetensors, %zu file(s), %zu tensors (%s)\n\ntensors:\n", path.c_str(), files.size(),
              tensors.size(), human_bytes(total).c_str());
  for (const auto& t : tensors) {
    std::printf("  %-48s %-6s %-20s %12s  %s\n", t["name"].get<std::string>().c_str(),
                t["dtype"].get<std::string>().c_str(), shape_string(t["shape"].get<std::vector<uint64_t>>()).c_str(),
                human_bytes(t["bytes"].get<uint64_t>()).c_str(), t["file"].get<std::string>().c_str());
  }
  if (config && config->ok()) std::printf("\nmodel: %s\n", config_text(config->value()).c_str());
  else if (config) std::printf("\nmodel: not usable by ft: %s\n", config->status().message().c_str());
  return 0;
}

int run_info(int argc, char** argv) {
  auto args = parse_command(argc, argv, {.flags = {"--json"}});
  if (args.ok() && args->help()) {
    std::fputs(kInfoHelp, stdout);
    return 0;
  }
  if (!args.ok() || args->positional().size() != 1) {
    std::fprintf(stderr, "ft-model info: %s\n%s", args.ok() ? "expected one FILE or DIR" : args.status().message().c_str(),
                 kInfoHelp);
    return 2;
  }
  const std::string path = args->positional()[0];
  const bool as_json = args->has("--json");
  std::error_code ec;
  if (fs::is_directory(path, ec)) return info_safetensors(path, true, as_json);
  if (!fs::exists(path, ec)) {
    std::fprintf(stderr, "ft-model info: %s does not exist\n", path.c_str());
    return 1;
  }
  if (fs::path(path).extension() == ".safetensors") return info_safetensors(path, false, as_json);
  return info_gguf(path, as_json);
}

// ---- convert / synth ---------------------------------------------------------

ConvertCallbacks progress_callbacks(bool quiet) {
  ConvertCallbacks cb;
  cb.note = [](const std::string& note) { std::fprintf(stderr, "note: %s\n", note.c_str()); };
  if (!quiet) {
    cb.on_tensor = [](size_t i, size_t n, const std::string& name, GgmlType type) {
      std::fprintf(stderr, "[%4zu/%zu] %-36s %s\n", i + 1, n, name.c_str(), std::string(ggml_type_name(type)).c_str());
    };
  }
  return cb;
}

Result<ModelFileType> file_type_arg(const CliArgs& a) {
  return a.has("--type") ? parse_model_file_type(a.get("--type")) : ModelFileType::kF16;
}

int run_convert(int argc, char** argv) {
  auto args = parse_command(
      argc, argv, {.value_options = {"--output", "--type"}, .flags = {"--quiet"}, .aliases = {{"-o", "--output"}}});
  if (args.ok() && args->help()) {
    std::fputs(kConvertHelp, stdout);
    return 0;
  }
  if (!args.ok() || args->positional().size() != 1 || !args->has("--output")) {
    std::fprintf(stderr, "ft-model convert: %s\n%s",
                 args.ok() ? "expected DIR and -o OUT.gguf" : args.status().message().c_str(), kConvertHelp);
    return 2;
  }
  auto type = file_type_arg(*args);
  if (!type.ok()) {
    std::fprintf(stderr, "ft-model convert: %s\n", type.status().message().c_str());
    return 2;
  }
  ConvertOptions o;
  o.input_dir = args->positional()[0];
  o.output_path = args->get("--output");
  o.type = *type;
  o.callbacks = progress_callbacks(args->has("--quiet"));
  Status s = convert_hf_to_gguf(o);
  if (!s.ok()) {
    std::fprintf(stderr, "ft-model convert: %s\n", s.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", o.output_path.c_str());
  return 0;
}

Result<SynthOptions> synth_options(const CliArgs& a) {
  SynthOptions o;
  const std::string arch = a.get("--arch");
  if (arch == "qwen3") o.arch = ModelArch::kQwen3;
  else if (arch == "qwen2") o.arch = ModelArch::kQwen2;
  else if (arch == "llama") o.arch = ModelArch::kLlama;
  else return FT_ERROR(ErrorCode::kInvalidArgument, "--arch must be qwen3, qwen2 or llama");
  FT_ASSIGN_OR_RETURN(o.layers, a.get_positive_u32("--layers", o.layers));
  FT_ASSIGN_OR_RETURN(o.hidden, a.get_positive_u32("--hidden", o.hidden));
  FT_ASSIGN_OR_RETURN(o.intermediate, a.get_positive_u32("--intermediate", o.intermediate));
  FT_ASSIGN_OR_RETURN(o.heads, a.get_positive_u32("--heads", o.heads));
  FT_ASSIGN_OR_RETURN(o.kv_heads, a.get_positive_u32("--kv-heads", o.kv_heads));
  FT_ASSIGN_OR_RETURN(o.head_dim, a.get_positive_u32("--head-dim", o.head_dim));
  FT_ASSIGN_OR_RETURN(o.context_length, a.get_positive_u32("--context", o.context_length));
  FT_ASSIGN_OR_RETURN(o.seed, a.get_u64("--seed", o.seed));
  FT_ASSIGN_OR_RETURN(o.type, file_type_arg(a));
  o.tied_embeddings = a.has("--tied");
  if (!a.has("--vocab-from") && !a.has("--tokenizer"))
    return FT_ERROR(ErrorCode::kInvalidArgument, "--vocab-from tokenizer.json is required");
  o.tokenizer_json_path = a.has("--vocab-from") ? a.get("--vocab-from") : a.get("--tokenizer");
  if (a.has("--tokenizer-config")) o.tokenizer_config_path = a.get("--tokenizer-config");
  if (!a.has("--output")) return FT_ERROR(ErrorCode::kInvalidArgument, "-o OUT.gguf is required");
  o.output_path = a.get("--output");
  if (!a.positional().empty()) return FT_ERROR(ErrorCode::kInvalidArgument, "unexpected argument {}", a.positional()[0]);
  return o;
}

int run_synth(int argc, char** argv) {
  auto args = parse_command(argc, argv,
                            {.value_options = {"--arch", "--layers", "--hidden", "--intermediate", "--heads",
                                               "--kv-heads", "--head-dim", "--context", "--vocab-from", "--tokenizer",
                                               "--tokenizer-config", "--type", "--seed", "--output"},
                             .flags = {"--tied", "--quiet"},
                             .aliases = {{"-o", "--output"}}});
  if (args.ok() && args->help()) {
    std::fputs(kSynthHelp, stdout);
    return 0;
  }
  auto options = args.ok() ? synth_options(*args) : Result<SynthOptions>(args.status());
  if (!options.ok()) {
    std::fprintf(stderr, "ft-model synth: %s\n%s", options.status().message().c_str(), kSynthHelp);
    return 2;
  }
  options->callbacks = progress_callbacks(args->has("--quiet"));
  Status s = synth_model(*options);
  if (!s.ok()) {
    std::fprintf(stderr, "ft-model synth: %s\n", s.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", options->output_path.c_str());
  return 0;
}

}  // namespace

bool is_model_command(const std::string& command) {
  return command == "info" || command == "convert" || command == "synth";
}

int run_model_command(int argc, char** argv) {
  const std::string command = argv[0];
  if (command == "info") return run_info(argc, argv);
  if (command == "convert") return run_convert(argc, argv);
  return run_synth(argc, argv);
}

std::string model_commands_help() {
  return "  info FILE|DIR [--json]            metadata, tensors, types and sizes of a GGUF/safetensors model\n"
         "  convert DIR -o OUT.gguf [--type]  HF safetensors folder -> GGUF (config, tokenizer, chat template)\n"
         "  synth --arch A ... -o OUT.gguf    small random-weight model with a real tokenizer\n";
}

}  // namespace ft::tools
