#include "runtime/base/env.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ft {
namespace {

TEST(Env, IntReadsNumbersAndZeroOtherwise) {
  unsetenv("FT_TEST_ENV");
  EXPECT_EQ(env_int("FT_TEST_ENV"), 0);
  setenv("FT_TEST_ENV", "32", 1);
  EXPECT_EQ(env_int("FT_TEST_ENV"), 32);
  setenv("FT_TEST_ENV", "-3", 1);
  EXPECT_EQ(env_int("FT_TEST_ENV"), -3);
  setenv("FT_TEST_ENV", "many", 1);
  EXPECT_EQ(env_int("FT_TEST_ENV"), 0);
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
