# The byte-level BPE tokenizer (owner: tokenizer). Included by CMakeLists.txt here.
add_library(ft_tokenizer STATIC
  ${CMAKE_CURRENT_LIST_DIR}/utf8.cpp
  ${CMAKE_CURRENT_LIST_DIR}/utf8_nfc.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bpe_byte_level.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bpe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pretokenizer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tokenizer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tokenizer_hf.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tokenizer_spec.cpp
)
target_compile_definitions(ft_tokenizer PRIVATE PCRE2_STATIC PCRE2_CODE_UNIT_WIDTH=8)
target_link_libraries(ft_tokenizer PUBLIC ft_base PRIVATE ${FT_PCRE2_STATIC})
target_include_directories(ft_tokenizer PRIVATE ${FT_XXHASH_INCLUDE})
