// Defaults shared by the engine, its scheduler, the kernel plan and the
// command-line tools, so ft-serve and ft-jit warm plan for the same batches.
#pragma once

namespace ft {

// Sequences decoded together in one step (ft-serve --max-batch). Decode
// graphs are captured per power of 2 up to it; quantized batches up to 128
// rows run gemm_qr on NVIDIA, and the bf16 target of 32 concurrent
// sequences is met at 32.
inline constexpr int kDefaultMaxBatch = 32;

}  // namespace ft
