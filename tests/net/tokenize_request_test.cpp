#include "net/tokenize_request.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "tests/model/chatml_template.hpp"
#include "tests/model/tiny_tokenizers.hpp"

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

const model::tokenizer& tok() { return test_support::tiny_tokenizer_with_bos(); }
const model::chat_template& chatml = test_support::chatml_template();

std::vector<int32_t> tokens_of(const std::string& answer) {
  simdjson::dom::parser p;
  std::vector<int32_t> out;
  for (auto t : p.parse(answer)["tokens"].get_array()) out.push_back(int32_t(int64_t(t)));
  return out;
}

std::string answered(std::variant<std::string, api_error> a) {
  EXPECT_TRUE(std::holds_alternative<std::string>(a))
    << (std::holds_alternative<api_error>(a) ? std::get<api_error>(a).message : "");
  return std::holds_alternative<std::string>(a) ? std::get<std::string>(a) : "{}";
}

api_error refused(std::variant<std::string, api_error> a) {
  EXPECT_TRUE(std::holds_alternative<api_error>(a));
  return std::holds_alternative<api_error>(a) ? std::get<api_error>(a) : api_error{0, ""};
}

TEST(tokenize_request, tokenizes_text_with_the_special_tokens_unless_told_not_to) {
  const auto ids = tok().encode("hello world", true);
  ASSERT_EQ(ids.front(), tok().prefix_ids().front());
  const auto a = answered(answer_tokenize(R"({"prompt":"hello world"})", tok(), chatml, 4096));
  EXPECT_EQ(tokens_of(a), std::vector<int32_t>(ids.begin(), ids.end()));
  EXPECT_THAT(a, HasSubstr(R"("count":)" + std::to_string(ids.size())));
  EXPECT_THAT(a, HasSubstr(R"("max_model_len":4096)"));
  // llama.cpp's names.
  const auto plain = tok().encode("hello world");
  EXPECT_EQ(tokens_of(answered(answer_tokenize(R"({"content":"hello world","add_special":false})",
                                               tok(), chatml, std::nullopt))),
            std::vector<int32_t>(plain.begin(), plain.end()));
}

TEST(tokenize_request, renders_messages_with_the_chat_template) {
  const auto rendered =
    tok().encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", false);
  EXPECT_EQ(tokens_of(answered(answer_tokenize(R"({"messages":[{"role":"user","content":"hi"}]})",
                                               tok(), chatml, std::nullopt))),
            std::vector<int32_t>(rendered.begin(), rendered.end()));
}

TEST(tokenize_request, detokenizes_and_round_trips) {
  const auto ids = tok().encode("caf\xc3\xa9 au lait");
  std::string body = R"({"tokens":[)";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0)
      body += ',';
    body += std::to_string(ids[i]);
  }
  body += "]}";
  simdjson::dom::parser p;
  const auto answer = p.parse(answered(answer_detokenize(body, tok())));
  EXPECT_EQ(std::string_view(answer["prompt"]), "caf\xc3\xa9 au lait");
  EXPECT_EQ(std::string_view(answer["content"]), "caf\xc3\xa9 au lait");
}

TEST(tokenize_request, names_the_field_at_fault) {
  EXPECT_EQ(refused(answer_tokenize(R"({})", tok(), chatml, std::nullopt)).param, "prompt");
  EXPECT_EQ(refused(answer_tokenize(R"({"prompt":"a","messages":[]})", tok(), chatml,
                                    std::nullopt))
              .param,
            "prompt");
  EXPECT_EQ(refused(answer_tokenize(R"({"prompt":7})", tok(), chatml, std::nullopt)).param,
            "prompt");
  EXPECT_EQ(refused(answer_tokenize(R"({"prompt":"a","add_special_tokens":"yes"})", tok(),
                                    chatml, std::nullopt))
              .param,
            "add_special_tokens");
  EXPECT_EQ(refused(answer_tokenize(R"({"messages":[{"role":"wizard","content":"x"}]})", tok(),
                                    chatml, std::nullopt))
              .status,
            400);
  EXPECT_EQ(refused(answer_detokenize(R"({})", tok())).param, "tokens");
  EXPECT_EQ(refused(answer_detokenize(R"({"tokens":[-1]})", tok())).param, "tokens");
  EXPECT_THAT(refused(answer_detokenize(R"({"tokens":[1,100000]})", tok())).message,
              HasSubstr("token id 100000 is outside the vocabulary"));
  EXPECT_EQ(refused(answer_detokenize("[1]", tok())).status, 400);
}

} // namespace
} // namespace kvactor::net
