// The command-line parser every ft tool shares.
#include "tools/common/cli_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ft::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const CliSpec kSpec = {.value_options = {"--arch", "--jobs", "--output", "--var"},
                       .flags = {"--json", "--quiet"},
                       .aliases = {{"-o", "--output"}}};

Result<CliArgs> parse(std::vector<std::string> args, const CliSpec& spec = kSpec) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return CliArgs::parse(spec, static_cast<int>(argv.size()), argv.data());
}

std::string error_of(std::vector<std::string> args) {
  auto r = parse(std::move(args));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  return r.status().message();
}

TEST(CliArgs, ValuesFlagsAndPositionalsInAnyOrder) {
  auto r = parse({"in.gguf", "--arch", "gfx1150", "--json", "--jobs=4", "more"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->get("--arch"), "gfx1150");
  EXPECT_EQ(r->get("--jobs"), "4");
  EXPECT_TRUE(r->has("--json"));
  EXPECT_FALSE(r->has("--quiet"));
  EXPECT_FALSE(r->help());
  EXPECT_EQ(r->get("--output", "fallback"), "fallback");
  EXPECT_THAT(r->positional(), ElementsAre("in.gguf", "more"));
}

TEST(CliArgs, ValueMayBeEmptyOrLookLikeAnOption) {
  auto r = parse({"--arch=", "--output", "--json"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->has("--arch"));
  EXPECT_EQ(r->get("--arch", "unset"), "");
  EXPECT_EQ(r->get("--output"), "--json");
  EXPECT_FALSE(r->has("--json"));
}

TEST(CliArgs, AliasesNameTheLongOption) {
  auto r = parse({"-o", "a.gguf"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->get("--output"), "a.gguf");
  auto inline_value = parse({"-o=b.gguf"});
  ASSERT_TRUE(inline_value.ok());
  EXPECT_EQ(inline_value->get("--output"), "b.gguf");
}

TEST(CliArgs, RepeatedOptionsKeepEveryValueAndTheLastWins) {
  auto r = parse({"--var", "a=1", "--var=b=2", "--arch", "x", "--arch", "y"});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->get_all("--var"), ElementsAre("a=1", "b=2"));
  EXPECT_EQ(r->get("--arch"), "y");
  EXPECT_THAT(r->get_all("--jobs"), IsEmpty());
}

TEST(CliArgs, DoubleDashEndsOptions) {
  auto r = parse({"--json", "--", "--arch", "-h", "-"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->has("--json"));
  EXPECT_FALSE(r->has("--arch"));
  EXPECT_FALSE(r->help());
  EXPECT_THAT(r->positional(), ElementsAre("--arch", "-h", "-"));
}

TEST(CliArgs, SingleDashIsPositional) {
  auto r = parse({"-"});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->positional(), ElementsAre("-"));
}

TEST(CliArgs, UsageErrorsNameTheOption) {
  EXPECT_EQ(error_of({"--frobnicate"}), "unknown option --frobnicate");
  EXPECT_EQ(error_of({"-x"}), "unknown option -x");
  EXPECT_EQ(error_of({"--json=yes"}), "--json takes no value");
  EXPECT_EQ(error_of({"in", "--arch"}), "--arch needs a value");
  EXPECT_EQ(error_of({"-o"}), "-o needs a value");
}

TEST(CliArgs, HelpWinsOverOtherErrors) {
  for (const char* h : {"-h", "--help"}) {
    auto plain = parse({"x", h});
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(plain->help());
    auto broken = parse({"--frobnicate", h});
    ASSERT_TRUE(broken.ok()) << h;
    EXPECT_TRUE(broken->help());
  }
  EXPECT_FALSE(parse({"--frobnicate", "--", "--help"}).ok());
}

TEST(CliArgs, IntegerGetters) {
  auto r = parse({"--jobs", "12", "--arch", "-3", "--output", "x1"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->get_int("--jobs", 0).value(), 12);
  EXPECT_EQ(r->get_int("--arch", 0).value(), -3);
  EXPECT_EQ(r->get_int("--var", 7).value(), 7);
  EXPECT_EQ(r->get_int("--output", 0).status().message(), "--output expects a number, got 'x1'");

  EXPECT_EQ(r->get_positive_u32("--jobs", 1).value(), 12u);
  EXPECT_EQ(r->get_positive_u32("--var", 5).value(), 5u);
  EXPECT_EQ(r->get_positive_u32("--arch", 1).status().message(), "--arch must be a positive integer, got \"-3\"");
  EXPECT_EQ(r->get_u64("--jobs", 0).value(), 12u);
  EXPECT_EQ(r->get_u64("--output", 0).status().message(), "--output must be an unsigned integer, got \"x1\"");
}

TEST(CliArgs, PositiveU32RefusesZeroAndOverflow) {
  auto r = parse({"--jobs", "0", "--arch", "4294967296"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->get_positive_u32("--jobs", 1).ok());
  EXPECT_FALSE(r->get_positive_u32("--arch", 1).ok());
  EXPECT_EQ(r->get_u64("--arch", 0).value(), 4294967296u);
  auto empty = parse({"--jobs="});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->get_int("--jobs", 3).status().message(), "--jobs expects a number, got ''");
}

}  // namespace
}  // namespace ft::tools
