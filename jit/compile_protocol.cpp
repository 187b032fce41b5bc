#include "jit/compile_protocol.h"

namespace ft {

std::string encode_job(const CompileJob& job) {
  wire::Writer w;
  for (const std::string* s : {&job.toolchain, &job.kernel, &job.target, &job.source_name, &job.source}) w.str(*s);
  w.u32(static_cast<uint32_t>(job.headers.size()));
  for (const auto& [name, text] : job.headers) {
    w.str(name);
    w.str(text);
  }
  w.u32(static_cast<uint32_t>(job.flags.size()));
  for (const auto& f : job.flags) w.str(f);
  w.u32(job.text_assembly ? 1 : 0);
  return w.frame();
}

Result<CompileJob> decode_job(std::string_view payload) {
  wire::Reader r(payload);
  CompileJob job;
  for (std::string* s : {&job.toolchain, &job.kernel, &job.target, &job.source_name, &job.source}) {
    FT_ASSIGN_OR_RETURN(*s, r.str());
  }
  FT_ASSIGN_OR_RETURN(uint32_t n_headers, r.u32());
  for (uint32_t i = 0; i < n_headers; ++i) {
    FT_ASSIGN_OR_RETURN(std::string name, r.str());
    FT_ASSIGN_OR_RETURN(std::string text, r.str());
    job.headers.emplace_back(std::move(name), std::move(text));
  }
  FT_ASSIGN_OR_RETURN(uint32_t n_flags, r.u32());
  for (uint32_t i = 0; i < n_flags; ++i) {
    FT_ASSIGN_OR_RETURN(std::string flag, r.str());
    job.flags.push_back(std::move(flag));
  }
  FT_ASSIGN_OR_RETURN(uint32_t text_assembly, r.u32());
  job.text_assembly = text_assembly != 0;
  return job;
}

std::string encode_reply(const CompileReply& reply) {
  wire::Writer w;
  w.u32(static_cast<uint32_t>(reply.code));
  w.str(reply.message);
  w.str(reply.output.code_object);
  w.str(reply.output.log);
  return w.frame();
}

Result<CompileReply> decode_reply(std::string_view payload) {
  wire::Reader r(payload);
  CompileReply reply;
  FT_ASSIGN_OR_RETURN(uint32_t code, r.u32());
  reply.code = static_cast<ErrorCode>(code);
  FT_ASSIGN_OR_RETURN(reply.message, r.str());
  FT_ASSIGN_OR_RETURN(reply.output.code_object, r.str());
  FT_ASSIGN_OR_RETURN(reply.output.log, r.str());
  return reply;
}

CompileJob probe_job(const std::string& toolchain, const std::string& target, const std::vector<std::string>& flags) {
  CompileJob job;
  job.toolchain = toolchain;
  job.kernel = "ft_probe";
  job.target = target;
  job.source_name = "ft_probe.hip";
  job.source =
      "#include \"ft_device.h\"\n"
      "extern \"C\" __global__ void FT_LAUNCH_BOUNDS(64) ft_probe(float* p) { p[ft::thread_x()] = ft::fast_exp2(1.0f); }\n";
  job.flags = flags;
  return job;
}

}  // namespace ft
