// Compiled by code_object_meta_test at test time with
//   clang++-19 -x hip --offload-arch=<gfx> -nogpuinc -nogpulib --offload-device-only
// so that the AMDGPU metadata reader is checked against real compiler output.
// -nogpuinc gives no HIP headers: the attributes are spelled out.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define FT_WORKGROUP(max) __attribute__((amdgpu_flat_work_group_size(1, max)))

// Registers only: no LDS, no scratch.
extern "C" __global__ FT_WORKGROUP(256) void probe_scale(float* out, const float* in, float s, int n) {
  int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 256;
  if (i < n) out[i] = in[i] * s;
}

// A shared array gives a group segment; a private array indexed by loaded
// data cannot live in registers and gives a private (scratch) segment.
extern "C" __global__ FT_WORKGROUP(128) void probe_lds_scratch(float* out, const int* idx, int n) {
  __shared__ float tile[512];
  float local[300];
  int t = __builtin_amdgcn_workitem_id_x();
  for (int j = 0; j < 300; ++j) local[j] = out[j * n + t];
  tile[t] = local[idx[t] % 300];
  __builtin_amdgcn_s_barrier();
  out[t] = tile[(t + 1) % 128] + local[idx[t + 1] % 300];
}

// 64 live accumulators under a 24-VGPR budget: the register allocator spills.
extern "C" __global__ FT_WORKGROUP(64) __attribute__((amdgpu_num_vgpr(24)))
void probe_spills(float* out, const float* in, int n) {
  int t = __builtin_amdgcn_workitem_id_x();
  float acc[64];
  for (int j = 0; j < 64; ++j) acc[j] = in[j * n + t];
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < 64; ++j) acc[j] = acc[j] * acc[(j + 7) % 64] + acc[(j + 13) % 64];
  for (int j = 0; j < 64; ++j) out[j * n + t] = acc[j];
}
