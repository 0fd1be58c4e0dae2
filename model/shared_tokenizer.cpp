#include "model/shared_tokenizer.hpp"

#include <map>
#include <mutex>
#include <string>

#include "model/model_folder.hpp"

namespace kvactor::model {
namespace {

struct registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<const tokenizer>> by_model;
};

registry& the_registry() {
  static registry r;
  return r;
}

std::string key_of(const std::filesystem::path& model) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(model), ec);
  return (ec ? std::filesystem::absolute(model).lexically_normal() : p).string();
}

// `tok` shared under `key` (key_of its model), or the one already there.
std::shared_ptr<const tokenizer> share_at(const std::string& key, tokenizer tok) {
  registry& r = the_registry();
  std::lock_guard lock{r.mutex};
  auto& slot = r.by_model[key];
  if (auto held = slot.lock()) return held;
  auto shared = std::make_shared<const tokenizer>(std::move(tok));
  slot = shared;
  return shared;
}

} // namespace

std::shared_ptr<const tokenizer> share_tokenizer(const std::filesystem::path& model,
                                                 tokenizer tok) {
  return share_at(key_of(model), std::move(tok));
}

result<std::shared_ptr<const tokenizer>> shared_tokenizer(const std::filesystem::path& model) {
  const std::string key = key_of(model);
  {
    registry& r = the_registry();
    std::lock_guard lock{r.mutex};
    auto i = r.by_model.find(key);
    if (i != r.by_model.end())
      if (auto held = i->second.lock()) return held;
  }
  // NOTE: loaded outside the lock; two callers racing both load, and
  // share_at keeps the first.
  auto tok = load_model_tokenizer(model);
  if (!tok) return tok.error();
  return share_at(key, std::move(*tok));
}

} // namespace kvactor::model
