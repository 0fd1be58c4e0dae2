#include "model/chat/jinja_template.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;

std::string render(std::string_view source, std::string_view context = "{}",
                   std::string_view extra = "{}") {
  auto t = jinja_template::compile(source);
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message);
  if (!t)
    return {};
  auto r = t->render(context, extra);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : "";
}

std::string render_error(std::string_view source, std::string_view context = "{}") {
  auto t = jinja_template::compile(source);
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message);
  if (!t)
    return {};
  auto r = t->render(context);
  EXPECT_FALSE(r.has_value()) << *r;
  return r ? "" : r.error().message;
}

TEST(jinja_template, renders_variables_loops_and_filters) {
  EXPECT_EQ(render("{% for m in messages %}[{{ m.role|upper }}:{{ m['content'] }}]{% endfor %}",
                   R"({"messages":[{"role":"user","content":"hi"},{"role":"bot","content":"yo"}]})"),
            "[USER:hi][BOT:yo]");
  // Python's semantics: slices, string methods, `in`, dict methods.
  EXPECT_EQ(render("{{ s[::-1] }}|{{ s.startswith('ab') }}|{{ 'c' in s }}|{{ s.split('b') }}|"
                   "{{ d.get('k', 'none') }}",
                   R"({"s":"abc","d":{}})"),
            "cba|True|True|['a', 'c']|none");
}

// As apply_chat_template: trim_blocks and lstrip_blocks, so that a tag on a
// line of its own leaves no line behind.
TEST(jinja_template, trims_blocks_as_chat_templates_expect) {
  EXPECT_EQ(render("  {% if true %}\nA\n  {% endif %}\nB"), "A\nB");
}

// |trim is Python's str.strip(): no-break, ideographic and other Unicode
// spaces and U+001C..U+001F go too; a zero-width space is no space.
TEST(jinja_template, trims_as_python_does) {
  EXPECT_EQ(render("[{{ s|trim }}]", R"({"s":"\u00a0S\u3000\u001c \u0085"})"), "[S]");
  EXPECT_EQ(render("[{{ s|trim }}]", R"({"s":"\u200bS"})"), "[\u200bS]");
}

TEST(jinja_template, writes_json_as_transformers_tojson_does) {
  // Not Jinja's HTML-safe tojson: <, > and & stay, non-ASCII stays.
  EXPECT_EQ(render("{{ v|tojson }}", R"({"v":{"a":"<é&>","b":[1,2]}})"),
            R"({"a": "<é&>", "b": [1, 2]})");
  EXPECT_EQ(render("{{ v|tojson(indent=2) }}", R"({"v":{"a":1}})"), "{\n  \"a\": 1\n}");
}

TEST(jinja_template, knows_loop_controls_and_generation_blocks) {
  EXPECT_EQ(render("{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}"
                   "{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("<{% generation %}answer{% endgeneration %}>"), "<answer>");
}

TEST(jinja_template, gives_the_templates_error_text) {
  EXPECT_EQ(render_error("{{ raise_exception('roles must alternate') }}"),
            "line 1: roles must alternate");
  EXPECT_THAT(render_error("a\n{{ m.content.x.y }}", R"({"m":{}})"),
              HasSubstr("line 2: 'dict object' has no attribute 'content'"));
  EXPECT_THAT(render_error("{{ 1 / 0 }}"), HasSubstr("ZeroDivisionError"));
}

TEST(jinja_template, names_the_line_of_a_syntax_error) {
  auto bad = jinja_template::compile("ok\n{% for m in messages %}\n{{ m }}");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("line 3"));
  EXPECT_THAT(bad.error().message, HasSubstr("endfor"));
  auto filter = jinja_template::compile("{{ x|no_such_filter }}");
  ASSERT_FALSE(filter.has_value());
  EXPECT_THAT(filter.error().message, HasSubstr("no_such_filter"));
}

// The sandbox: a template reads its variables and cannot change them or
// reach Python's internals.
TEST(jinja_template, runs_templates_in_a_sandbox) {
  EXPECT_THAT(render_error("{{ m.append(1) }}", R"({"m":[]})"), HasSubstr("unsafe"));
  EXPECT_THAT(render_error("{{ ''.__class__.__mro__[1].__subclasses__() }}"),
              HasSubstr("unsafe"));
}

TEST(jinja_template, reads_a_bad_context_as_an_error) {
  auto t = jinja_template::compile("{{ x }}");
  ASSERT_TRUE(t.has_value());
  EXPECT_THAT(t->render("{not json").error().message, HasSubstr("JSONDecodeError"));
  // extra's keys lose to the context's
  EXPECT_EQ(*t->render(R"({"x":1})", R"({"x":2})"), "1");
  EXPECT_EQ(*t->render("{}", R"({"x":2})"), "2");
}

TEST(jinja_template, reads_the_time_it_is_given) {
  auto t = jinja_template::compile("{{ strftime_now('%Y') }}");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(*t->render("{}", "{}", 1'800'000'000), "2027"); // 2027-01-15
  EXPECT_EQ(t->render("{}")->size(), 4u);                   // the clock's year
}

// Bytes that are not UTF-8 go through as they came.
TEST(jinja_template, passes_bytes_that_are_not_utf8_through) {
  auto t = jinja_template::compile("<{{ s }}>");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(*t->render("{\"s\":\"a\xff\xc3\"}"), "<a\xff\xc3>");
}

// Each render takes the GIL on its own thread; templates are shared.
TEST(jinja_template, renders_from_many_threads_at_once) {
  auto t = jinja_template::compile("{% for i in range(n) %}{{ i % 10 }}{% endfor %}");
  ASSERT_TRUE(t.has_value());
  std::vector<std::thread> threads;
  std::vector<std::string> out(4);
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      std::string context = R"({"n":)";
      context += std::to_string(100 + k);
      context += '}';
      for (int rep = 0; rep < 50; ++rep)
        out[k] = t->render(context).value();
    });
  for (auto& th : threads)
    th.join();
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(out[k].size(), 100u + k);
    EXPECT_EQ(out[k].substr(0, 12), "012345678901");
  }
}

} // namespace
} // namespace kvactor::model
