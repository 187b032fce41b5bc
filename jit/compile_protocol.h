// Requests and replies between the compile service and ft-compile-worker.
#pragma once

#include "jit/toolchain.h"
#include "jit/wire.h"

namespace ft {

struct CompileReply {
  ErrorCode code = ErrorCode::kOk;
  std::string message;  // the error, when code != kOk
  CompileOutput output;
};

std::string encode_job(const CompileJob& job);
Result<CompileJob> decode_job(std::string_view payload);
std::string encode_reply(const CompileReply& reply);
Result<CompileReply> decode_reply(std::string_view payload);

// The smallest kernel a toolchain must compile for a target to count as
// supporting it (used by the hipRTC trial compile).
CompileJob probe_job(const std::string& toolchain, const std::string& target, const std::vector<std::string>& flags);

}  // namespace ft
