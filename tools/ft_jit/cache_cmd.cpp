#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "jit/code_object_meta.h"
#include "tools/common/cli_args.h"
#include "tools/ft_jit/commands.h"
#include "tools/ft_jit/jit_session.h"

namespace ft::tools {
namespace {

constexpr const char* kCacheHelp =
    "usage: ft-jit cache <stats|list|prune|clear> [options]\n"
    "  stats [--json]              entries, bytes and size cap, per arch\n"
    "  list [--arch A] [--json]    every cached kernel with its key fields and resources\n"
    "  prune [--max-bytes N]       drop least recently used entries down to N bytes\n"
    "                              (default: the configured cap, FT_CACHE_MAX_BYTES)\n"
    "  clear                       drop every entry\n"
    "The cache lives in $FT_CACHE_DIR, else $XDG_CACHE_HOME/freetoken, else ~/.cache/freetoken.\n";

std::string when(int64_t t) {
  char buf[32];
  std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&tt));
  return buf;
}

int fail(const Status& s) {
  std::fprintf(stderr, "ft-jit cache: %s\n", s.message().c_str());
  return 1;
}

}  // namespace

int cmd_cache(int argc, char** argv) {
  auto parsed = CliArgs::parse({.value_options = {"--arch", "--max-bytes"}, .flags = {"--json"}}, argc, argv);
  if (parsed.ok() && parsed->help()) {
    std::fputs(kCacheHelp, stdout);
    return 0;
  }
  auto max_bytes = parsed.ok() ? parsed->get_int("--max-bytes", -1) : Result<int64_t>(parsed.status());
  if (!max_bytes.ok() || parsed->positional().size() != 1) {
    std::fprintf(stderr, "ft-jit cache: %s\n\n%s",
                 !max_bytes.ok() ? max_bytes.status().message().c_str() : "expected one of stats, list, prune, clear",
                 kCacheHelp);
    return 2;
  }
  const CliArgs& args = *parsed;
  const std::string sub = args.positional()[0];
  if (sub != "stats" && sub != "list" && sub != "prune" && sub != "clear") {
    std::fprintf(stderr, "ft-jit cache: unknown subcommand '%s'\n\n%s", sub.c_str(), kCacheHelp);
    return 2;
  }
  auto cache = open_cache_or_report();
  if (!cache) return 1;
  const bool json = args.has("--json");
  if (sub == "stats") {
    auto s = cache->stats();
    if (!s.ok()) return fail(s.status());
    if (json) {
      nlohmann::json j = {{"path", s->path}, {"in_memory", s->in_memory}, {"entries", s->entries},
                          {"total_bytes", s->total_bytes}, {"file_bytes", s->file_bytes}, {"max_bytes", s->max_bytes},
                          {"entries_per_arch", s->entries_per_arch}, {"bytes_per_arch", s->bytes_per_arch}};
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("cache: %s%s\nentries: %lld\ncode objects: %.1f MiB of %.1f MiB allowed\n", s->path.c_str(),
                  s->in_memory ? " (in memory: the cache directory is not writable)" : "", (long long)s->entries,
                  s->total_bytes / 1048576.0, s->max_bytes / 1048576.0);
      for (const auto& [arch, n] : s->entries_per_arch)
        std::printf("  %-16s %6lld entries %9.1f KiB\n", arch.c_str(), (long long)n, s->bytes_per_arch[arch] / 1024.0);
    }
    return 0;
  }
  if (sub == "list") {
    auto list = cache->list(args.get("--arch"));
    if (!list.ok()) return fail(list.status());
    if (json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& e : *list)
        out.push_back({{"key", e.key}, {"kernel", e.fields.kernel}, {"entry", e.fields.entry}, {"arch", e.fields.arch},
                       {"toolchain", e.fields.toolchain}, {"toolchain_version", e.fields.toolchain_version},
                       {"flags", e.fields.flags}, {"source_hash", e.fields.source_hash}, {"bytes", e.blob_size},
                       {"compile_ms", e.compile_ms}, {"created_at", e.created_at}, {"last_used_at", e.last_used_at},
                       {"resources", to_json(e.resources)}});
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::printf("%-34s %-14s %-16s %8s %8s  %s\n", "kernel", "arch", "toolchain", "bytes", "ms", "last used");
      for (const auto& e : *list)
        std::printf("%-34s %-14s %-16s %8lld %8.0f  %s\n", e.fields.kernel.c_str(), e.fields.arch.c_str(),
                    (e.fields.toolchain + " " + e.fields.toolchain_version).c_str(), (long long)e.blob_size,
                    e.compile_ms, when(e.last_used_at).c_str());
      std::printf("%zu entries\n", list->size());
    }
    return 0;
  }
  if (sub == "prune") {
    auto removed = cache->prune(*max_bytes >= 0 ? *max_bytes : cache->max_bytes());
    if (!removed.ok()) return fail(removed.status());
    std::printf("pruned %lld entries\n", (long long)*removed);
    return 0;
  }
  if (Status s = cache->clear(); !s.ok()) return fail(s);
  std::printf("cache cleared: %s\n", cache->path().c_str());
  return 0;
}

}  // namespace ft::tools
