#pragma once
// One tokenizer per model in a process: the runtime's, which the HTTP
// front's /tokenize and /detokenize share rather than load a second copy
// (a 128k vocabulary's tokenizer holds tens of MB).
//
//   auto tok = share_tokenizer(dir, std::move(loaded.tok)); // the runtime
//   auto same = shared_tokenizer(dir);                      // the front: the same one
//
// Models are told apart by their canonical path. The entries are weak:
// once every holder has let go, the next call loads the tokenizer anew.

#include <filesystem>
#include <memory>

#include "base/result.hpp"
#include "model/tokenizer/tokenizer.hpp"

namespace kvactor::model {

// `tok` (the tokenizer of the model at `model`) shared; where one of that
// model is already shared, that one (and `tok` is dropped).
std::shared_ptr<const tokenizer> share_tokenizer(const std::filesystem::path& model,
                                                 tokenizer tok);

// The shared tokenizer of the model at `model`, loaded (load_model_tokenizer)
// and shared when none is.
result<std::shared_ptr<const tokenizer>> shared_tokenizer(const std::filesystem::path& model);

} // namespace kvactor::model
