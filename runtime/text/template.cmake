# Chat templates: a Jinja2 interpreter (jinja_*) and the ChatTemplate API on top.
add_library(ft_chat_template STATIC
  ${CMAKE_CURRENT_LIST_DIR}/jinja.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_strings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_value.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_lexer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_parser.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_interpreter.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_operators.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_filters.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_tests.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jinja_methods.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chat_template.cpp
)
target_link_libraries(ft_chat_template PUBLIC ft_base)
