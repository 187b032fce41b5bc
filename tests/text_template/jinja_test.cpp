// Language tests of the Jinja interpreter: each feature against the output
// Python's Jinja2 gives (trim_blocks and lstrip_blocks on, as transformers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/text/jinja.h"

namespace ft {
namespace {

using json = nlohmann::ordered_json;
using ::testing::HasSubstr;

std::string render(const std::string& source, const json& vars = json::object()) {
  auto t = JinjaTemplate::parse(source);
  if (!t.ok()) return "PARSE ERROR: " + t.status().message();
  auto out = t->render(vars);
  if (!out.ok()) return "RENDER ERROR: " + out.status().message();
  return *out;
}

Status render_error(const std::string& source, const json& vars = json::object()) {
  auto t = JinjaTemplate::parse(source);
  if (!t.ok()) return t.status();
  auto out = t->render(vars);
  return out.status();
}

TEST(JinjaText, PlainTextAndTrailingNewline) {
  EXPECT_EQ(render("hello"), "hello");
  EXPECT_EQ(render("hello\n"), "hello");  // keep_trailing_newline is off
  EXPECT_EQ(render("a\n\n"), "a\n");
  EXPECT_EQ(render("{# comment #}x"), "x");
}

TEST(JinjaWhitespace, TrimBlocksAndLstripBlocks) {
  EXPECT_EQ(render("{% if true %}\nyes\n{% endif %}\nafter"), "yes\nafter");
  EXPECT_EQ(render("    {% if true %}x{% endif %}"), "x");
  EXPECT_EQ(render("a  {% if true %}x{% endif %}"), "a  x");  // not at line start: kept
  EXPECT_EQ(render("  {{ 'e' }}"), "  e");                    // lstrip_blocks skips {{
  EXPECT_EQ(render("{# c #}\nx"), "x");
  EXPECT_EQ(render("  {%+ if true %}x{% endif %}"), "  x");
  EXPECT_EQ(render("{% if true +%}\nx{% endif %}"), "\nx");
}

TEST(JinjaWhitespace, DashModifiers) {
  EXPECT_EQ(render("a  \n {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(render("a \n{%- if true -%}\n b {%- endif %}"), "ab");
  EXPECT_EQ(render("x {#- c -#} y"), "xy");
}

TEST(JinjaExpr, Literals) {
  EXPECT_EQ(render("{{ 'a\\n\\'b' }}|{{ \"q\\\"\" }}"), "a\n'b|q\"");
  EXPECT_EQ(render("{{ 42 }} {{ -7 }} {{ 1.5 }} {{ 2.0 }} {{ 1e3 }}"), "42 -7 1.5 2.0 1000.0");
  EXPECT_EQ(render("{{ true }} {{ False }} {{ none }} {{ None }}"), "True False None None");
  EXPECT_EQ(render("{{ [1, 'a', none] }}"), "[1, 'a', None]");
  EXPECT_EQ(render("{{ {'k': 1, 'j': [true]} }}"), "{'k': 1, 'j': [True]}");
  EXPECT_EQ(render("{{ (1, 2) }} {{ (1,) }} {{ () }}"), "(1, 2) (1,) ()");
  EXPECT_EQ(render("{{ 'a' 'b' }}"), "ab");
  EXPECT_EQ(render("{{ '\\u00e9\\x41' }}"), "\xC3\xA9" "A");
}

TEST(JinjaExpr, Arithmetic) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 10 }}"), "7 9 1024");
  EXPECT_EQ(render("{{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }}"), "3.5 3 -4 1 2");
  EXPECT_EQ(render("{{ 1 + 1.5 }} {{ 'ab' * 2 }} {{ [1] + [2] }}"), "2.5 abab [1, 2]");
  EXPECT_EQ(render("{{ 'a' ~ 1 ~ none ~ undefined_thing }}"), "a1None");
  EXPECT_EQ(render("{{ 2 * 3 ~ 'x' }}"), "6x");  // * binds tighter than ~
}

TEST(JinjaExpr, ComparisonsAndLogic) {
  EXPECT_EQ(render("{{ 1 < 2 }} {{ 'a' < 'b' }} {{ 2 >= 2.0 }} {{ 1 == 1.0 }} {{ [1,2] == [1,2] }}"),
            "True True True True True");
  EXPECT_EQ(render("{{ 'b' in 'abc' }} {{ 3 not in [1, 2] }} {{ 'k' in {'k': 1} }}"), "True True True");
  EXPECT_EQ(render("{{ 0 or 'x' }} {{ 1 and 'y' }} {{ [] or 'empty' }} {{ not '' }}"), "x y empty True");
  EXPECT_EQ(render("{{ 'yes' if 1 > 0 else 'no' }} {{ 'a' if false }}|"), "yes |");
  EXPECT_EQ(render("{{ not 1 == 2 }}"), "True");
}

TEST(JinjaExpr, AttributesAndSubscripts) {
  json vars = {{"m", {{"role", "user"}, {"content", "hi"}}}, {"xs", {10, 20, 30}}};
  EXPECT_EQ(render("{{ m.role }} {{ m['content'] }} {{ xs[0] }} {{ xs[-1] }} {{ xs.1 }}", vars), "user hi 10 30 20");
  EXPECT_EQ(render("[{{ m.missing }}] {{ m.missing is defined }} {{ m.missing.deeper is defined }}", vars),
            "[] False False");
  EXPECT_EQ(render("{{ xs[5] is defined }} {{ 'héllo'[1] }}", vars), "False \xC3\xA9");
}

TEST(JinjaExpr, Slicing) {
  json vars = {{"xs", {1, 2, 3, 4, 5}}};
  EXPECT_EQ(render("{{ xs[1:] }} {{ xs[:2] }} {{ xs[::-1] }} {{ xs[-2:] }} {{ xs[::2] }}", vars),
            "[2, 3, 4, 5] [1, 2] [5, 4, 3, 2, 1] [4, 5] [1, 3, 5]");
  EXPECT_EQ(render("{{ xs[3:1:-1] }} {{ xs[10:] }} {{ 'héllo'[1:3] }} {{ 'abc'[::-1] }}", vars),
            "[4, 3] [] \xC3\xA9l cba");
  EXPECT_EQ(render("{{ 'abcdef'[:-1] }}"), "abcde");
}

TEST(JinjaStatements, IfElifElse) {
  const char* t = "{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %}";
  EXPECT_EQ(render(t, {{"x", 1}}), "one");
  EXPECT_EQ(render(t, {{"x", 2}}), "two");
  EXPECT_EQ(render(t, {{"x", 3}}), "many");
}

TEST(JinjaStatements, ForLoopVariables) {
  json vars = {{"xs", {"a", "b", "c"}}};
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.length }}"
                   "{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %}{{ x }};{% endfor %}",
                   vars),
            "1033Fa;2123b;3213Lc;");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.previtem ~ '>' ~ x ~ '>' ~ loop.nextitem }} {% endfor %}", vars),
            ">a>b a>b>c b>c> ");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in xs if x != 'b' %}{{ x }}{{ loop.length }}{% endfor %}", vars), "a2c2");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }} {% endfor %}"), "a=1 b=2 ");
  EXPECT_EQ(render("{% for k in {'z': 1, 'a': 2} %}{{ k }}{% endfor %}"), "za");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.cycle('o', 'e') }}{% endfor %}", vars), "oeo");
  EXPECT_EQ(render("{% for x in undefined_list %}x{% endfor %}ok"), "ok");
}

TEST(JinjaStatements, LoopControls) {
  EXPECT_EQ(render("{% for i in range(10) %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}"), "012");
  EXPECT_EQ(render("{% for i in range(5) %}{% if i is odd %}{% continue %}{% endif %}{{ i }}{% endfor %}"), "024");
}

TEST(JinjaStatements, SetScopingAndUnpacking) {
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ a }}{{ b }}"), "12");
  EXPECT_EQ(render("{% set a, b = 3, 4 %}{{ a + b }}"), "7");
  EXPECT_EQ(render("{% set block %}in {{ 'side' }}{% endset %}[{{ block }}]"), "[in side]");
  EXPECT_EQ(render("{% if true %}{% set y = 5 %}{% endif %}{{ y }}"), "5");
}

TEST(JinjaStatements, Namespace) {
  EXPECT_EQ(render("{% set ns = namespace(n=0, found=false) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}"
                   "{% endfor %}{{ ns.n }} {{ ns.found }}"),
            "6 False");
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.x = 'set' %}{{ ns.x }}"), "set");
}

TEST(JinjaStatements, Macros) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }}"),
            "Hi A! Hi B? Hi C.");
  EXPECT_EQ(render("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}"),
            "321");
  EXPECT_EQ(render("{% set g = 'global' %}{% macro show() %}{{ g }}{% endmacro %}{{ show() }}"), "global");
  EXPECT_EQ(render("{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}"),
            "1(2,){'k': 3}");
}

TEST(JinjaStatements, FilterBlockRawAndGeneration) {
  EXPECT_EQ(render("{% filter upper %}abc{% endfilter %}"), "ABC");
  EXPECT_EQ(render("{% raw %}{{ not evaluated }}{% endraw %}"), "{{ not evaluated }}");
  EXPECT_EQ(render("{% raw %}\n  {{ x }}\n{% endraw %}\n"), "\n  {{ x }}\n");  // no trim after raw
  EXPECT_EQ(render("{% generation %}text{% endgeneration %}"), "text");
}

TEST(JinjaFilters, StringFilters) {
  EXPECT_EQ(render("{{ '  x  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ 'Ab' | lower }}{{ 'Ab' | upper }}"),
            "x|a|abAB");
  EXPECT_EQ(render("{{ 'hello world' | title }} {{ 'hELLO' | capitalize }} {{ 'a-b-b' | replace('b', 'c') }}"),
            "Hello World Hello a-c-c");
  EXPECT_EQ(render("{{ 'one two  three' | wordcount }} {{ '<a&b>' | escape }} {{ '<x>' | safe }}"),
            "3 &lt;a&amp;b&gt; <x>");
  EXPECT_EQ(render("{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}"), "a\n  b\n\n  c|  a\n  b");
  EXPECT_EQ(render("{{ 'héllo' | length }} {{ 42 | string }}{{ '7' | int + 1 }} {{ 'x' | int }} {{ '2.5' | float }}"),
            "5 428 0 2.5");
  // Python semantics: int() takes decimal text only; round() rounds the exact binary value.
  EXPECT_EQ(render("{{ '0x1A' | int }} {{ 2.675 | round(2) }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 3.7 | int }}"),
            "0 2.67 2.0 4.0 3");
}

TEST(JinjaFilters, SequenceFilters) {
  json vars = {{"xs", {3, 1, 2}}, {"ws", {"b", "A", "c", "a"}}};
  EXPECT_EQ(render("{{ xs | length }} {{ xs | first }} {{ xs | last }} {{ xs | sort }} {{ xs | sort(reverse=true) }}",
                   vars),
            "3 3 2 [1, 2, 3] [3, 2, 1]");
  EXPECT_EQ(render("{{ ws | sort }} {{ ws | unique | list }} {{ ws | join(',') }} {{ xs | sum }}", vars),
            "['A', 'a', 'b', 'c'] ['b', 'A', 'c'] b,A,c,a 6");
  EXPECT_EQ(render("{{ xs | reverse | list }} {{ xs | max }} {{ xs | min }} {{ xs | count }}", vars),
            "[2, 1, 3] 3 1 3");
  EXPECT_EQ(render("{{ range(6) | select('odd') | list }} {{ range(6) | reject('even') | list }}"),
            "[1, 3, 5] [1, 3, 5]");
  EXPECT_EQ(render("{{ ['a', 'b'] | map('upper') | join }}"), "AB");
}

TEST(JinjaFilters, ObjectFilters) {
  json vars = {{"ms",
                {{{"role", "user"}, {"n", 2}, {"meta", {{"k", "x"}}}},
                 {{"role", "assistant"}, {"n", 1}},
                 {{"role", "user"}, {"n", 3}}}}};
  EXPECT_EQ(render("{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='n') | list }}", vars), "[2, 3]");
  EXPECT_EQ(render("{{ ms | rejectattr('role', '==', 'user') | list | length }}", vars), "1");
  EXPECT_EQ(render("{{ ms | selectattr('meta') | map(attribute='meta.k') | first }}", vars), "x");
  EXPECT_EQ(render("{{ ms | map(attribute='missing', default='d') | join }}", vars), "ddd");
  EXPECT_EQ(render("{{ ms | sort(attribute='n') | map(attribute='n') | list }}", vars), "[1, 2, 3]");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | dictsort }} {{ {'b': 1, 'a': 2} | items | list }}"),
            "[('a', 2), ('b', 1)] [('b', 1), ('a', 2)]");
  EXPECT_EQ(render("{{ x | default('dflt') }} {{ '' | default('e', true) }} {{ none | default('n') }}"), "dflt e None");
}

TEST(JinjaFilters, ToJson) {
  json vars = {{"t", {{"name", "f"}, {"z", {1, 2.5, true, nullptr}}, {"a", "é\"\n"}}}};
  EXPECT_EQ(render("{{ t | tojson }}", vars), "{\"name\": \"f\", \"z\": [1, 2.5, true, null], \"a\": \"é\\\"\\n\"}");
  EXPECT_EQ(render("{{ t | tojson(indent=2) }}", vars),
            "{\n  \"name\": \"f\",\n  \"z\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"a\": \"é\\\"\\n\"\n}");
  EXPECT_EQ(render("{{ 'é' | tojson(ensure_ascii=true) }} {{ {'b': 1, 'a': []} | tojson(sort_keys=true) }}"),
            "\"\\u00e9\" {\"a\": [], \"b\": 1}");
  EXPECT_EQ(render("{{ {'a': 1} | tojson(separators=(',', ':')) }}"), "{\"a\":1}");
}

TEST(JinjaTests, TypeTests) {
  json vars = {{"s", "x"}, {"n", nullptr}, {"d", json::object()}, {"l", json::array()}, {"i", 3}, {"f", 1.5}};
  EXPECT_EQ(render("{{ s is string }}{{ n is none }}{{ d is mapping }}{{ l is iterable }}{{ l is sequence }}", vars),
            "TrueTrueTrueTrueTrue");
  EXPECT_EQ(render("{{ i is number }}{{ i is integer }}{{ f is integer }}{{ f is float }}{{ true is boolean }}", vars),
            "TrueTrueFalseTrueTrue");
  EXPECT_EQ(render("{{ q is defined }}{{ q is undefined }}{{ s is not defined }}{{ false is false }}", vars),
            "FalseTrueFalseTrue");
  EXPECT_EQ(render("{{ i is odd }}{{ i is even }}{{ i is divisibleby 3 }}{{ s is equalto 'x' }}{{ 'x' is in 'xy' }}",
                   vars),
            "TrueFalseTrueTrueTrue");
  EXPECT_EQ(render("{{ d is string }}{{ s is mapping }}{{ i is true }}", vars), "FalseFalseFalse");
}

TEST(JinjaMethods, StringMethods) {
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'abc'.upper() }}"),
            "TrueTrueABC");
  EXPECT_EQ(render("{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a-b-c'.rsplit('-', 1) }}"),
            "['a', 'b', '', 'c'] ['a', 'b'] ['a-b', 'c']");
  EXPECT_EQ(render("[{{ '\\n\\nx \\n'.strip('\\n') }}] [{{ '  x '.lstrip() }}] [{{ 'xyy'.rstrip('y') }}]"),
            "[x ] [x ] [x]");
  EXPECT_EQ(render("{{ 'aXbX'.replace('X', '-') }} {{ 'héllo'.find('l') }} {{ 'banana'.count('an') }}"),
            "a-b- 2 2");
  EXPECT_EQ(render("{{ '{} and {name}'.format(1, name='x') }} {{ ', '.join(['a', 'b']) }} {{ 'ab cd'.title() }}"),
            "1 and x a, b Ab Cd");
  EXPECT_EQ(render("{{ 'a</think>b'.split('</think>')[-1] }}"), "b");
}

TEST(JinjaMethods, DictAndListMethods) {
  json vars = {{"d", {{"a", 1}, {"items", "shadowed key"}}}};
  EXPECT_EQ(render("{{ d.get('a') }} {{ d.get('zz', 'dflt') }} {{ d.get('zz') }} {{ d.keys() | list }}", vars),
            "1 dflt None ['a', 'items']");
  EXPECT_EQ(render("{{ d.items() | list | length }} {{ d['items'] }}", vars), "2 shadowed key");
  EXPECT_EQ(render("{% set l = [1] %}{% set _ = l.append(2) %}{{ l }} {{ l.pop() }} {{ l }}"), "[1, 2] 2 [1]");
}

TEST(JinjaGlobals, RangeStrftimeAndDict) {
  EXPECT_EQ(render("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}"),
            "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
  EXPECT_EQ(render("{{ dict(a=1)['a'] }}"), "1");
  std::string year = render("{{ strftime_now('%Y') }}");
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
}

TEST(JinjaErrors, ParseErrorsNameTheLine) {
  Status s = render_error("line one\n{% if x %}\nno end");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("endif"));
  s = render_error("ok\n\n{{ 1 + }}");
  EXPECT_THAT(s.message(), HasSubstr("line 3"));
  s = render_error("{% bogus %}");
  EXPECT_THAT(s.message(), HasSubstr("unknown or unsupported tag 'bogus'"));
  s = render_error("a\n{{ 'unterminated }}");
  EXPECT_THAT(s.message(), HasSubstr("line 2, column 4"));
  s = render_error("{% for x in y %}{% endif %}");
  EXPECT_THAT(s.message(), HasSubstr("line 1"));
}

TEST(JinjaErrors, RuntimeErrorsNameTheLine) {
  Status s = render_error("a\nb\n  {{ raise_exception('Roles must alternate') }}");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("line 3, column 6"));
  EXPECT_THAT(s.message(), HasSubstr("raise_exception: Roles must alternate"));
  s = render_error("\n{{ nothing_here() }}");
  EXPECT_THAT(s.message(), HasSubstr("line 2"));
  EXPECT_THAT(s.message(), HasSubstr("'nothing_here' is undefined"));
  s = render_error("{{ 'a' + 1 }}");
  EXPECT_THAT(s.message(), HasSubstr("can only concatenate str"));
  s = render_error("{{ x | nosuchfilter }}");
  EXPECT_THAT(s.message(), HasSubstr("no filter named 'nosuchfilter'"));
  s = render_error("{% set x = 1 %}{% set x.a = 2 %}");
  EXPECT_THAT(s.message(), HasSubstr("namespace"));
  s = render_error("{{ 1 // 0 }}");
  EXPECT_THAT(s.message(), HasSubstr("by zero"));
  s = render_error("{% for x in 5 %}{% endfor %}");
  EXPECT_THAT(s.message(), HasSubstr("not iterable"));
}

TEST(JinjaErrors, RunawayRecursionIsAnError) {
  Status s = render_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("depth"));
}

// Digits past int64 where a template may write an index: an error, or (in
// a path of keys) a key that is not there, never an exception out of parse()
// or render(). Found by tests/fuzz/chat_template_fuzz.
TEST(JinjaErrors, IndicesPastInt64AreErrorsNotExceptions) {
  Status s = render_error("{{ x.99999999999999999999 }}", json{{"x", json::array({1, 2})}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("out of range"));
  EXPECT_EQ(render("{{ x.1 }}", json{{"x", json::array({1, 2})}}), "2");
  s = render_error("{{ '{99999999999999999999}'.format(1) }}");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no argument"));
  EXPECT_EQ(render("{{ '{1}{0}'.format('a', 'b') }}"), "ba");
  const json rows = json{{"rows", json::array({json::array({"a", "b"}), json::array({"c", "d"})})}};
  EXPECT_EQ(render("{{ rows | map(attribute='99999999999999999999') | list | length }}", rows), "2");
  EXPECT_EQ(render("{{ rows | map(attribute='1') | join }}", rows), "bd");
}

}  // namespace
}  // namespace ft
