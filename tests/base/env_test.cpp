#include "runtime/base/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ft {
namespace {

// The value where the predicate takes it; 0 when unset; anything else 0
// with a warning naming the variable, its value and what it takes.
TEST(Env, IntTakesWhatItsPredicateTakesAndWarnsOtherwise) {
  const auto wave_counts = [](int v) { return v == 4 || v == 8 || v == 16; };
  unsetenv("FT_TEST_ENV");
  testing::internal::CaptureStderr();
  EXPECT_EQ(env_int("FT_TEST_ENV", wave_counts, "4, 8 or 16"), 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "unset: nothing to say";
  setenv("FT_TEST_ENV", "8", 1);
  EXPECT_EQ(env_int("FT_TEST_ENV", wave_counts, "4, 8 or 16"), 8);
  setenv("FT_TEST_ENV", "-3", 1);
  EXPECT_EQ(env_int("FT_TEST_ENV", [](int v) { return v < 0; }, "a negative number"), -3);
  for (const char* bad : {"12", "many", "8x", "", "99999999999"}) {
    setenv("FT_TEST_ENV", bad, 1);
    testing::internal::CaptureStderr();
    EXPECT_EQ(env_int("FT_TEST_ENV", wave_counts, "4, 8 or 16"), 0) << "value '" << bad << "'";
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find(std::string("FT_TEST_ENV=") + bad + " is ignored: it takes 4, 8 or 16"), std::string::npos)
        << said;
  }
  unsetenv("FT_TEST_ENV");
}

TEST(Env, OffOnlyForExactlyZero) {
  unsetenv("FT_TEST_ENV");
  EXPECT_FALSE(env_off("FT_TEST_ENV"));
  setenv("FT_TEST_ENV", "0", 1);
  EXPECT_TRUE(env_off("FT_TEST_ENV"));
  for (const char* on : {"", "1", "00", "0x", "off"}) {
    setenv("FT_TEST_ENV", on, 1);
    EXPECT_FALSE(env_off("FT_TEST_ENV")) << "value '" << on << "'";
  }
  unsetenv("FT_TEST_ENV");
}

}  // namespace
}  // namespace ft
