// The <think> block of thinking models cut out of generated text: whole, and
// streamed in every split of the text into two pushes and one character at a time.
#include "runtime/server/reasoning.h"

#include <gtest/gtest.h>

namespace ft::server {
namespace {

constexpr ReasoningFormat kThink = ReasoningFormat::kThink;

ReasoningSplit stream_in_two(std::string_view text, size_t cut, bool opened) {
  ReasoningStream stream(kThink, opened);
  ReasoningSplit out;
  for (std::string_view part : {text.substr(0, cut), text.substr(cut)}) {
    ReasoningSplit s = stream.push(part);
    out.reasoning += s.reasoning;
    out.content += s.content;
  }
  ReasoningSplit rest = stream.finish();
  out.reasoning += rest.reasoning;
  out.content += rest.content;
  return out;
}

// Checks `text` split whole, in every two pushes, and one character per push.
void expect_split(std::string_view text, bool opened, std::string_view reasoning, std::string_view content) {
  ReasoningSplit whole = split_reasoning(kThink, opened, text);
  EXPECT_EQ(whole.reasoning, reasoning) << text;
  EXPECT_EQ(whole.content, content) << text;
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    ReasoningSplit two = stream_in_two(text, cut, opened);
    EXPECT_EQ(two.reasoning, reasoning) << text << " cut at " << cut;
    EXPECT_EQ(two.content, content) << text << " cut at " << cut;
  }
  ReasoningStream stream(kThink, opened);
  ReasoningSplit bytes;
  for (char c : text) {
    ReasoningSplit s = stream.push(std::string_view(&c, 1));
    bytes.reasoning += s.reasoning;
    bytes.content += s.content;
  }
  ReasoningSplit rest = stream.finish();
  EXPECT_EQ(bytes.reasoning + rest.reasoning, reasoning) << text;
  EXPECT_EQ(bytes.content + rest.content, content) << text;
}

TEST(Reasoning, Qwen3AnswerOpensWithTheBlock) {
  expect_split("<think>\nThe user greets me. I should greet back.\n</think>\n\nHello! How can I help?", false,
               "The user greets me. I should greet back.", "Hello! How can I help?");
  // Whitespace inside the reasoning stays; only its ends go.
  expect_split("  <think>a\n\n b </think>c  d\n", false, "a\n\n b", "c  d\n");
  // An empty block (Qwen3 with thinking off writes it in the prompt; a model may too).
  expect_split("<think>\n\n</think>\n\nHi", false, "", "Hi");
}

TEST(Reasoning, PromptThatOpensTheBlock) {
  EXPECT_TRUE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
  EXPECT_TRUE(prompt_opens_reasoning("<｜Assistant｜><think>"));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));  // thinking off
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n"));
  expect_split("Let me think.\n</think>\n\nYes.", true, "Let me think.", "Yes.");
}

TEST(Reasoning, NoBlockIsAllContentUnchanged) {
  expect_split("Hello <think>not at the start</think>", false, "", "Hello <think>not at the start</think>");
  expect_split("\n<thinking> is a tag", false, "", "\n<thinking> is a tag");
  expect_split("<thin", false, "", "<thin");  // cut off before it could tell
  expect_split(" \n", false, "", " \n");
  ReasoningSplit off = split_reasoning(ReasoningFormat::kNone, true, "<think>a</think>b");
  EXPECT_EQ(off.reasoning, "");
  EXPECT_EQ(off.content, "<think>a</think>b");
}

TEST(Reasoning, CutOffInsideTheBlockIsAllReasoning) {
  expect_split("<think>\nStep one, then step two </thi", false, "Step one, then step two </thi", "");
  expect_split("still thinking\n\n", true, "still thinking", "");
  // A second </think> is content.
  expect_split("<think>a</think>b</think>", false, "a", "b</think>");
}

TEST(Reasoning, ReasoningGoesOutAsItComes) {
  ReasoningStream stream(kThink, false);
  ReasoningSplit s = stream.push("<think>\nFirst");
  EXPECT_EQ(s.reasoning, "First");
  s = stream.push(" thought. \n</");  // the whitespace may end the block: held
  EXPECT_EQ(s.reasoning, " thought.");
  s = stream.push("think>\n\nAnswer");
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.content, "Answer");
  s = stream.push(" more");
  EXPECT_EQ(s.content, " more");
  s = stream.finish();
  EXPECT_EQ(s.reasoning + s.content, "");
}

}  // namespace
}  // namespace ft::server
