// shared_tokenizer: one tokenizer per model in a process, however the
// model's path is spelled, and a fresh load once no one holds it.

#include "model/shared_tokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model_folder.hpp"
#include "model/tiny/tiny_tokenizer.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;

// A model folder holding only a tokenizer.json: the tiny tokenizer of
// `vocab` ids.
void write_tokenizer(const temp_dir& dir, int64_t vocab) {
  tiny::tiny_options o;
  o.vocab_size = vocab;
  test_support::write_file(dir.path() / "tokenizer.json",
                           write_tokenizer_json(tiny::make_tokenizer_spec(o)));
}

TEST(shared_tokenizer, the_runtimes_copy_serves_every_later_caller) {
  temp_dir dir;
  write_tokenizer(dir, 400);
  auto loaded = load_model_tokenizer(dir.path());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<token_id> want = loaded->encode("hello world");
  const std::shared_ptr<const tokenizer> runtime = share_tokenizer(dir.path(), std::move(*loaded));
  auto front = shared_tokenizer(dir.path() / "." / "");
  ASSERT_TRUE(front) << front.error().message;
  EXPECT_EQ(front->get(), runtime.get()) << "another spelling of the path, the same tokenizer";
  EXPECT_EQ((*front)->encode("hello world"), want);
  // A second tokenizer shared for the same model is dropped for the first.
  auto again = load_model_tokenizer(dir.path());
  ASSERT_TRUE(again);
  EXPECT_EQ(share_tokenizer(dir.path(), std::move(*again)).get(), runtime.get());
}

TEST(shared_tokenizer, loads_anew_once_no_one_holds_it_and_tells_models_apart) {
  temp_dir a, b;
  write_tokenizer(a, 400);
  write_tokenizer(b, 500);
  auto first = shared_tokenizer(a.path());
  ASSERT_TRUE(first) << first.error().message;
  auto second = shared_tokenizer(b.path());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE(first->get(), second->get());
  EXPECT_EQ((*first)->vocab_size(), 400u);
  EXPECT_EQ((*second)->vocab_size(), 500u);
  const std::weak_ptr<const tokenizer> gone = *first;
  first->reset();
  EXPECT_TRUE(gone.expired()) << "the registry holds no tokenizer alive";
  auto reloaded = shared_tokenizer(a.path());
  ASSERT_TRUE(reloaded) << reloaded.error().message;
  EXPECT_EQ((*reloaded)->vocab_size(), 400u);
}

TEST(shared_tokenizer, a_model_without_one_is_an_error_naming_the_file) {
  temp_dir dir;
  auto t = shared_tokenizer(dir.path());
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr("tokenizer.json"));
}

} // namespace
} // namespace kvactor::model
