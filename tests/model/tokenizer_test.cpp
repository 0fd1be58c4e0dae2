#include "model/tokenizer/tokenizer.hpp"
#include "base/json.hpp"

#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/safetensors_writer.hpp"
#include "tests/model/temp_dir.hpp"
#include "tests/model/tokenizer_fixture.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using ids = std::vector<token_id>;
using namespace test_support;

tokenizer make(const tokenizer_spec& spec) {
  auto t = tokenizer::build(spec, "test");
  KVACTOR_ASSERT(t.has_value(), "fixture tokenizer must build");
  return std::move(*t);
}

// tokenizer.json text written by hand, with merges in the older "a b" form.
std::string json_with_string_merges(const tokenizer_spec& spec) {
  std::string vocab, merges;
  for (const auto& [s, id] : spec.vocab)
    vocab += (vocab.empty() ? "" : ",") + json::quote(s) + ":" + std::to_string(id);
  for (const auto& [a, b] : spec.merges)
    merges += (merges.empty() ? "" : ",") + json::quote(a + " " + b);
  return R"({"version":"1.0","added_tokens":[{"id":265,"content":"<|endoftext|>","single_word":false,)"
         R"("lstrip":false,"rstrip":false,"normalized":false,"special":true}],"normalizer":null,)"
         R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},)"
         R"("post_processor":null,"decoder":{"type":"ByteLevel"},)"
         R"("model":{"type":"BPE","dropout":null,"unk_token":null,"vocab":{)" +
         vocab + R"(},"merges":[)" + merges + "]}}";
}

TEST(tokenizer, encodes_hand_derived_vectors) {
  const auto t = make(hand_built_spec());
  EXPECT_EQ(t.vocab_size(), 266u);
  EXPECT_EQ(t.num_merges(), 9u);
  EXPECT_EQ(t.encode("hello world"), (ids{id_hello, id_sp_world}));
  EXPECT_EQ(t.encode("hellohello"), (ids{id_hello, id_hello}));
  // "held": h+e (rank 0) then l, d merge (rank 7) -> he, ld.
  EXPECT_EQ(t.encode("held"), (ids{id_he, id_ld}));
  // "lll": the leftmost l+l merges first.
  EXPECT_EQ(t.encode("lll"), (ids{id_ll, 'l'}));
  // " wor" is one piece; " w" then "or" then " wor".
  EXPECT_EQ(t.encode(" wor"), (ids{id_sp_wor}));
  // No merge applies: one id per byte.
  EXPECT_EQ(t.encode("Hi!"), (ids{'H', 'i', '!'}));
  EXPECT_EQ(t.encode(""), ids{});
}

TEST(tokenizer, special_tokens_are_matched_first_and_never_split) {
  const auto t = make(hand_built_spec());
  EXPECT_EQ(t.encode("hello<|endoftext|>hello"), (ids{id_hello, id_eot, id_hello}));
  EXPECT_EQ(t.encode("<|endoftext|><|endoftext|>"), (ids{id_eot, id_eot}));
  // A partial special token is ordinary text.
  const auto partial = t.encode("<|endof");
  EXPECT_EQ(std::find(partial.begin(), partial.end(), id_eot), partial.end());
  EXPECT_EQ(t.decode(partial), "<|endof");
  EXPECT_TRUE(t.is_special(id_eot));
  EXPECT_FALSE(t.is_special(id_hello));
  EXPECT_EQ(t.find("<|endoftext|>"), id_eot);
  EXPECT_EQ(t.find("Ġworld"), id_sp_world);
  EXPECT_EQ(t.decode(ids{id_hello, id_eot, id_sp_world}), "hello<|endoftext|> world");
  EXPECT_EQ(t.decode(ids{id_hello, id_eot, id_sp_world}, true), "hello world");
}

TEST(tokenizer, copies_outlive_the_original) {
  std::optional<tokenizer> original(make(hand_built_spec()));
  const tokenizer copy = *original;
  original.reset();
  EXPECT_EQ(copy.encode("hello<|endoftext|> world"), (ids{id_hello, id_eot, id_sp_world}));
  EXPECT_EQ(copy.find("<|endoftext|>"), id_eot);
}

TEST(tokenizer, many_added_tokens_match_longest_first) {
  auto spec = hand_built_spec();
  for (int i = 0; i < 2000; ++i)
    spec.added_tokens.push_back(
      {300 + i, "<|reserved_" + std::to_string(i) + "|>", true, false, false});
  spec.added_tokens.push_back({2400, "<|end", false, false, false}); // a prefix of <|endoftext|>
  const auto t = make(spec);
  EXPECT_EQ(t.encode("a<|reserved_1999|><|endoftext|><|end"), (ids{'a', 2299, id_eot, 2400}));
  EXPECT_EQ(t.encode("<|reserved_2000|>").size(), 17u); // not a token: 17 bytes of text
}

TEST(tokenizer, lstrip_and_rstrip_absorb_whitespace) {
  auto spec = hand_built_spec();
  spec.added_tokens.push_back({266, "<mask>", true, true, true});
  const auto t = make(spec);
  EXPECT_EQ(t.encode("hello  <mask>  hello"), (ids{id_hello, 266, id_hello}));
  // Unicode White_Space too (no-break space, ideographic space), as HF does.
  EXPECT_EQ(t.encode("hello\u00a0<mask>\u3000hello"), (ids{id_hello, 266, id_hello}));
  // Only the stripping side: the special token without strip keeps spaces.
  EXPECT_EQ(t.encode("hello <|endoftext|> hello"), (ids{id_hello, ' ', id_eot, ' ', id_hello}));
}

TEST(tokenizer, multi_byte_characters_are_byte_tokens) {
  const auto t = make(hand_built_spec());
  EXPECT_EQ(t.encode("é"), (ids{0xc3, 0xa9}));
  EXPECT_EQ(t.encode("🙂"), (ids{0xf0, 0x9f, 0x99, 0x82}));
  EXPECT_EQ(t.decode(ids{0xc3, 0xa9}), "é");
}

TEST(tokenizer, invalid_utf8_bytes_round_trip) {
  const auto t = make(hand_built_spec());
  const std::string text = "a\xff\xfe" "b\xc3";
  EXPECT_EQ(t.encode(text), (ids{'a', 0xff, 0xfe, 'b', 0xc3}));
  EXPECT_EQ(t.decode(t.encode(text)), text);
}

TEST(tokenizer, missing_bytes_use_unk_token) {
  auto spec = hand_built_spec();
  spec.vocab.erase(spec.vocab.begin()); // byte 0x00 has no token
  spec.vocab.emplace_back("<unk>", 300);
  spec.bpe.unk_token = "<unk>";
  const auto t = make(spec);
  EXPECT_EQ(t.encode(std::string("a\0b", 3)), (ids{'a', 300, 'b'}));
  spec.bpe.unk_token.reset();
  auto bad = tokenizer::build(spec, "tok.json");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("tok.json: key 'model.vocab': no token for byte 0x00"));
}

TEST(tokenizer, round_trips_assorted_text) {
  const auto t = make(hand_built_spec());
  for (std::string_view text :
       {"hello world", "  leading and trailing  ", "tabs\tand\nnew\r\nlines\n\n", "I'm YOU'RE it's",
        "numbers 1234567 and 3.14159", "日本語のテキスト", "emoji 🙂🙃 mixed", "Привет, мир!",
        "<|endoftext|>", "a<|endoftext|>b <|endoftext|> c", "\xe2\x82 broken",
        "hellohello world world"}) {
    EXPECT_EQ(t.decode(t.encode(text)), text);
  }
}

TEST(tokenizer, parses_both_merge_forms_the_same) {
  const auto spec = hand_built_spec();
  auto from_arrays = tokenizer::parse(write_tokenizer_json(spec), "arrays.json");
  ASSERT_TRUE(from_arrays) << from_arrays.error().message;
  auto from_strings = tokenizer::parse(json_with_string_merges(spec), "strings.json");
  ASSERT_TRUE(from_strings) << from_strings.error().message;
  for (auto* t : {&*from_arrays, &*from_strings}) {
    EXPECT_EQ(t->num_merges(), 9u);
    EXPECT_EQ(t->encode("hello world<|endoftext|>"), (ids{id_hello, id_sp_world, id_eot}));
    EXPECT_TRUE(t->is_special(id_eot));
  }
  // ByteLevel with use_regex splits the GPT-2 way: "hello", " ", " world".
  EXPECT_EQ(from_strings->encode("hello  world"), (ids{id_hello, ' ', id_sp_world}));
}

TEST(tokenizer, digits_then_byte_level_as_smollm_ships_it) {
  std::string json = write_tokenizer_json(hand_built_spec());
  const std::string from =
    json.substr(json.find("\"pre_tokenizer\""),
                json.find("\"post_processor\"") - json.find("\"pre_tokenizer\""));
  json.replace(
    json.find(from), from.size(),
    R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true},)"
    R"( {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]},)"
    "\n  ");
  auto t = tokenizer::parse(json, "smol.json");
  ASSERT_TRUE(t) << t.error().message;
  // Digits first: "hello12" -> "hello", "1", "2"; then the GPT-2 split of each.
  EXPECT_EQ(t->encode("hello12 world"), (ids{id_hello, '1', '2', id_sp_world}));
}

TEST(tokenizer, ignore_merges_takes_whole_pieces) {
  auto spec = hand_built_spec();
  spec.vocab.emplace_back("hlo", 300); // no merge chain produces it
  spec.bpe.ignore_merges = true;
  EXPECT_EQ(make(spec).encode("hlo"), ids{300});
  spec.bpe.ignore_merges = false;
  EXPECT_EQ(make(spec).encode("hlo"), (ids{'h', 'l', 'o'}));
}

TEST(tokenizer, load_from_file) {
  temp_dir dir;
  write_file(dir / "tokenizer.json", write_tokenizer_json(hand_built_spec()));
  auto t = tokenizer::load(dir / "tokenizer.json");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->encode("hello"), ids{id_hello});
}

std::string parse_error(std::string_view json) {
  auto t = tokenizer::parse(json, "tok.json");
  EXPECT_FALSE(t) << json.substr(0, 200);
  return t ? std::string() : t.error().message;
}

std::string replaced(std::string s, std::string_view from, std::string_view to) {
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

TEST(tokenizer, adds_the_post_processors_tokens_only_when_asked) {
  const std::string good = write_tokenizer_json(hand_built_spec());
  auto t = tokenizer::parse(
    replaced(good, R"("post_processor": {"type": "ByteLevel")",
             R"("post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}, )"
             R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<e>"}}, )"
             R"({"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<h>"}}], )"
             R"("special_tokens": {"<e>": {"id": "<e>", "ids": [265]}, )"
             R"("<h>": {"id": "<h>", "ids": [259, 259]}}}])"),
    "tok.json");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->prefix_ids(), ids{id_eot});
  EXPECT_EQ(t->encode(" world", true), (ids{id_eot, id_sp_world, id_hello, id_hello}));
  EXPECT_EQ(t->encode(" world"), ids{id_sp_world});
  EXPECT_EQ(t->encode("", true), (ids{id_eot, id_hello, id_hello}));

  EXPECT_THAT(parse_error(replaced(good, R"("post_processor": {"type": "ByteLevel")",
                                   R"("post_processor": {"type": "TemplateProcessing", )"
                                   R"("single": [{"SpecialToken": {"id": "<x>"}}])")),
              HasSubstr("key 'post_processor.special_tokens': has no entry for '<x>'"));
  EXPECT_THAT(parse_error(replaced(good, R"("post_processor": {"type": "ByteLevel")",
                                   R"("post_processor": {"type": "TemplateProcessing", )"
                                   R"("single": [{"SpecialToken": {"id": "<x>"}}], )"
                                   R"("special_tokens": {"<x>": {"ids": [99999]}})")),
              HasSubstr("key 'post_processor': token id 99999 is not in the vocabulary"));
}

TEST(tokenizer, refuses_a_huge_stray_id) {
  auto spec = hand_built_spec();
  spec.added_tokens.push_back({2000000000, "<|far|>", true, false, false});
  auto t = tokenizer::build(spec, "tok.json");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr("tok.json: token ids are implausibly sparse"));
}

TEST(tokenizer, bad_files_give_clear_errors) {
  temp_dir dir;
  auto missing = tokenizer::load(dir / "tokenizer.json");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("tokenizer.json: file not found"));

  const std::string good = write_tokenizer_json(hand_built_spec());
  EXPECT_THAT(parse_error(good.substr(0, good.size() / 2)), HasSubstr("tok.json: invalid JSON"));
  EXPECT_THAT(parse_error("[]"), HasSubstr("tok.json: expected a JSON object"));
  EXPECT_THAT(parse_error(replaced(good, R"("type": "BPE")", R"("type": "WordPiece")")),
              HasSubstr("key 'model.type': unsupported model type 'WordPiece'"));
  // Any regex runs (PCRE2); one that does not compile is named, and so is an
  // unknown behavior.
  EXPECT_THAT(parse_error(replaced(good, R"("behavior": "Isolated")", R"("behavior": "Split")")),
              HasSubstr("unknown Split behavior 'Split'"));
  EXPECT_TRUE(tokenizer::parse(replaced(good, R"("Regex": ")", R"("Regex": "\\d+|)"), "tok.json"));
  EXPECT_THAT(parse_error(replaced(good, R"("Regex": ")", R"("Regex": "(\\d+|)")),
              HasSubstr("key 'pre_tokenizer': Split regex '(\\d+|"));
  EXPECT_THAT(
    parse_error(replaced(good, R"(["h", "e"])", R"(["h", "q!"])")),
    HasSubstr("key 'model.merges[0]': merge 'h q!' uses a token that is not in the vocabulary"));
  EXPECT_THAT(parse_error(replaced(good, R"(["h", "e"])", R"(["h"])")),
              HasSubstr("model.merges[0]"));
  EXPECT_THAT(parse_error(replaced(good, R"("normalizer": null)",
                                   R"("normalizer": {"type": "BertNormalizer"})")),
              HasSubstr("key 'normalizer': unsupported normalizer 'BertNormalizer'"));
  EXPECT_THAT(parse_error(replaced(good, R"("normalizer": null)",
                                   R"("normalizer": {"type": "Replace", "pattern": )"
                                   R"({"Regex": " {2,}"}, "content": " "})")),
              HasSubstr("Replace with the regex ' {2,}' is not supported"));
  EXPECT_THAT(parse_error(replaced(good, R"("decoder": {"type": "ByteLevel")",
                                   R"("decoder": {"type": "WordPiece")")),
              HasSubstr("key 'decoder': unsupported decoder 'WordPiece'"));
  EXPECT_THAT(parse_error(replaced(good, R"("decoder": {"type": "ByteLevel")",
                                   R"("decoder": {"type": "Sequence", "decoders": [)"
                                   R"({"type": "Fuse"}, {"type": "ByteLevel"}])")),
              HasSubstr("key 'decoder': ByteLevel after Fuse is not supported"));
  EXPECT_THAT(parse_error(replaced(good, R"("post_processor": {"type": "ByteLevel")",
                                   R"("post_processor": {"type": "RobertaProcessing")")),
              HasSubstr("key 'post_processor': unsupported post-processor 'RobertaProcessing'"));
  EXPECT_THAT(parse_error(replaced(good, R"("dropout": null)", R"("dropout": 0.1)")),
              HasSubstr("key 'model.dropout'"));
  EXPECT_THAT(parse_error(replaced(good, R"("id": 265)", R"("id": "x")")),
              HasSubstr("key 'added_tokens.id'"));
  EXPECT_THAT(parse_error(replaced(good, R"("vocab": {)", R"("vocob": {)")),
              HasSubstr("key 'model.vocab': missing"));
  EXPECT_THAT(parse_error(replaced(good, R"({"type": "ByteLevel", "add_prefix_space": false)",
                                   R"({"type": "Metaspace", "add_prefix_space": false)")),
              HasSubstr("Metaspace after other pre-tokenizers is not supported"));
}

} // namespace
} // namespace kvactor::model
