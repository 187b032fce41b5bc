#include "gfx_targets/targets.h"

#include <gtest/gtest.h>

namespace ft {
namespace {

TEST(Targets, TableHasTheRequiredTargets) {
  for (const char* name : {"gfx1150", "gfx1151", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201", "gfx90a",
                           "gfx942", "gfx950", "sm_80", "sm_89", "sm_90"}) {
    const TargetFacts* t = find_target(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_TRUE(valid(t->tiles.norm)) << name;
    EXPECT_TRUE(valid(t->tiles.act)) << name;
    EXPECT_GT(t->lds_bytes_per_block, 0) << name;
    EXPECT_EQ(t->vgprs_per_simd % t->vgpr_granule, 0) << name;
  }
}

TEST(Targets, ArchFactsThatShapeKernels) {
  EXPECT_EQ(find_target("gfx1150")->vgprs_per_simd, 1024);
  EXPECT_EQ(find_target("gfx1151")->vgprs_per_simd, 1536);
  EXPECT_EQ(find_target("gfx1100")->vgprs_per_simd, 1536);
  EXPECT_EQ(find_target("gfx1100")->matrix_core, MatrixCore::kWmmaGfx11);
  EXPECT_EQ(find_target("gfx1201")->matrix_core, MatrixCore::kWmmaGfx12);
  EXPECT_EQ(find_target("gfx942")->matrix_core, MatrixCore::kMfma);
  EXPECT_EQ(find_target("gfx942")->fp8, Fp8Kind::kFnuz);
  EXPECT_EQ(find_target("gfx950")->fp8, Fp8Kind::kOcp);
  EXPECT_EQ(find_target("gfx1201")->fp8, Fp8Kind::kOcp);
  EXPECT_TRUE(find_target("gfx90a")->has_dot(kDotSdot4));
  EXPECT_FALSE(find_target("gfx1100")->has_dot(kDotSdot4));
  EXPECT_TRUE(find_target("gfx1100")->has_dot(kDotSudot4));
  EXPECT_EQ(find_target("gfx942")->wave_size, 64);
  EXPECT_EQ(find_target("gfx1150")->wave_size, 32);
  EXPECT_EQ(find_target("sm_90")->compile_arch, "sm_90a");
  EXPECT_EQ(find_target("sm_90a"), find_target("sm_90"));
}

TEST(Targets, TargetIdFeaturesParseAndCanonicalize) {
  auto id = parse_target_id("gfx90a:xnack-:sramecc+");
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  EXPECT_EQ(id->to_string(), "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(id->compile_target(), "gfx90a:sramecc+:xnack-");
  auto plain = parse_target_id("gfx90a");
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(plain->to_string(), id->to_string());
  auto sm = parse_target_id("sm_90");
  ASSERT_TRUE(sm.ok());
  EXPECT_EQ(sm->compile_target(), "sm_90a");
}

TEST(Targets, BadTargetsAreClearErrors) {
  auto unknown = parse_target_id("gfx9999");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("gfx9999"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("gfx1150"), std::string::npos) << "lists the known targets";
  EXPECT_NE(unknown.status().message().find("sm_90"), std::string::npos);

  EXPECT_FALSE(parse_target_id("gfx1100:xnack-").ok()) << "RDNA has no xnack feature";
  EXPECT_FALSE(parse_target_id("gfx90a:xnack").ok()) << "a feature needs + or -";
  EXPECT_FALSE(parse_target_id("gfx90a:xnack-:xnack+").ok());
  EXPECT_FALSE(parse_target_id("gfx90a:turbo+").ok());
}

TEST(Targets, OccupancyFollowsRegisterFileAndGranule) {
  const TargetFacts& g1150 = *find_target("gfx1150");  // 1024 VGPRs, granule 16, 16 waves max
  EXPECT_EQ(occupancy_waves(g1150, 32, 0, 0, 0), 16);
  EXPECT_EQ(occupancy_waves(g1150, 128, 0, 0, 0), 8);
  EXPECT_EQ(occupancy_waves(g1150, 129, 0, 0, 0), 7);  // 144 after rounding
  const TargetFacts& g1100 = *find_target("gfx1100");  // 1536 VGPRs, granule 24
  EXPECT_EQ(occupancy_waves(g1100, 128, 0, 0, 0), 10);  // 144 -> 10
  const TargetFacts& g90a = *find_target("gfx90a");    // 512 unified, granule 8, 8 waves max
  EXPECT_EQ(occupancy_waves(g90a, 64, 0, 0, 0), 8);
  EXPECT_EQ(occupancy_waves(g90a, 126, 128, 0, 0), 2);  // 128 + 128 = 256 -> 2
  const TargetFacts& h = *find_target("sm_90");
  EXPECT_EQ(occupancy_waves(h, 32, 0, 0, 256), 64);
  EXPECT_EQ(occupancy_waves(h, 128, 0, 0, 256), 16);
  // LDS-bound: 64 KiB blocks, 128 KiB per WGP -> 2 blocks of 8 waves over 4 SIMDs.
  EXPECT_EQ(occupancy_waves(g1150, 32, 0, 64 * 1024, 256), 4);
  EXPECT_EQ(occupancy_waves(g1150, 32, 0, 65 * 1024, 256), 0);
}

}  // namespace
}  // namespace ft
