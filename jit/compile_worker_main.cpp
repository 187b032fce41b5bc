// ft-compile-worker: compiles kernels on behalf of the compile service, one
// request at a time over stdin/stdout. It exists so that a compiler crash
// (Debian's hipRTC 5.2 aborts on gfx1100) kills this process, not the server.
//
//   ft-compile-worker            serve framed requests until stdin closes
//   ft-compile-worker --probe TOOLCHAIN TARGET
//                                trial-compile a tiny kernel; exit 0 when it works
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "jit/compile_protocol.h"
#include "jit/kernel_spec.h"
#include "jit/subprocess.h"
#include "jit/kernel_sources.h"

namespace {

ft::CompileReply run(const ft::CompileJob& job, std::map<std::string, std::unique_ptr<ft::Toolchain>>& toolchains) {
  ft::CompileReply reply;
  auto& tc = toolchains[job.toolchain];
  if (!tc) {
    auto opened = ft::open_toolchain(job.toolchain);
    if (!opened.ok()) {
      reply.code = opened.status().code();
      reply.message = opened.status().message();
      return reply;
    }
    tc = std::move(opened).value();
  }
  auto out = tc->compile(job);
  if (!out.ok()) {
    reply.code = out.status().code();
    reply.message = out.status().message();
  } else {
    reply.output = std::move(out).value();
  }
  return reply;
}

int probe(const std::string& toolchain, const std::string& target_text) {
  auto target = ft::parse_target_id(target_text);
  if (!target.ok()) {
    std::fprintf(stderr, "%s\n", target.status().to_string().c_str());
    return 2;
  }
  ft::CompileJob job = ft::probe_job(toolchain, target->compile_target(), ft::compile_flags(*target, toolchain));
  auto headers = ft::included_headers(job.source);
  if (!headers.ok()) {
    std::fprintf(stderr, "%s\n", headers.status().to_string().c_str());
    return 2;
  }
  job.headers = std::move(headers).value();
  std::map<std::string, std::unique_ptr<ft::Toolchain>> toolchains;
  ft::CompileReply reply = run(job, toolchains);
  if (reply.code != ft::ErrorCode::kOk) {
    std::fprintf(stderr, "%s\n", reply.message.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "usage: ft-compile-worker [--probe TOOLCHAIN TARGET]\n"
        "Internal helper of the ft compile service: compiles kernels sent as framed\n"
        "requests on stdin and answers on stdout. Not meant to be run by hand.\n");
    return 0;
  }
  if (argc == 4 && std::strcmp(argv[1], "--probe") == 0) return probe(argv[2], argv[3]);
  if (argc != 1) {
    std::fprintf(stderr, "ft-compile-worker: unexpected arguments (see --help)\n");
    return 2;
  }
  std::map<std::string, std::unique_ptr<ft::Toolchain>> toolchains;
  for (;;) {
    uint32_t size = 0;
    if (!ft::read_fd_exact(0, &size, sizeof size, 0).ok()) return 0;  // the service closed the pipe
    if (size > ft::wire::kMaxFrameBytes) return 3;
    std::string payload(size, '\0');
    if (!ft::read_fd_exact(0, payload.data(), size, 0).ok()) return 3;
    ft::CompileReply reply;
    auto job = ft::decode_job(payload);
    if (!job.ok()) {
      reply.code = job.status().code();
      reply.message = job.status().message();
    } else {
      reply = run(*job, toolchains);
    }
    std::string frame = ft::encode_reply(reply);
    if (!ft::write_fd_all(1, frame.data(), frame.size()).ok()) return 3;
  }
}
