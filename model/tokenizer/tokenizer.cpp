#include "model/tokenizer/tokenizer.hpp"

#include <algorithm>

#include "base/json.hpp"
#include "model/tokenizer/byte_level.hpp"
#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {
namespace {

// Start of the whitespace run (Unicode White_Space) that ends at `end`,
// not going below `begin`.
std::size_t skip_space_backward(std::string_view text, std::size_t begin, std::size_t end) {
  while (end > begin) {
    const auto c = decode_utf8_before(text, end, begin);
    if (!c.valid || !is_whitespace(c.code_point)) break;
    end -= c.length;
  }
  return end;
}

// End of the whitespace run that starts at `pos`.
std::size_t skip_space_forward(std::string_view text, std::size_t pos) {
  while (pos < text.size()) {
    const auto c = decode_utf8(text, pos);
    if (!c.valid || !is_whitespace(c.code_point)) break;
    pos += c.length;
  }
  return pos;
}

} // namespace

result<tokenizer> tokenizer::load(const std::filesystem::path& file) {
  auto text = json::read_file(file);
  if (!text) return text.error();
  return parse(std::string_view(text->data(), text->size()), file.string());
}

result<tokenizer> tokenizer::parse(std::string_view json_text, std::string_view source) {
  auto spec = parse_tokenizer_json(json_text, source);
  if (!spec) return spec.error();
  return build(std::move(*spec), source);
}

result<tokenizer> tokenizer::build(tokenizer_spec spec, std::string_view source) {
  auto bpe = bpe_model::build(spec.vocab, spec.merges, spec.bpe, source);
  if (!bpe) return bpe.error();
  auto steps = spec.decoder;
  if (steps.empty()) steps.push_back({});
  auto decoder = token_decoder::make(std::move(steps), source);
  if (!decoder) return decoder.error();
  tokenizer t(std::move(*bpe), std::move(*decoder));

  token_id max_id = -1;
  for (const auto& [s, id] : spec.vocab) max_id = std::max(max_id, id);
  for (const auto& a : spec.added_tokens) max_id = std::max(max_id, a.id);
  // NOTE: real vocabularies are dense; a stray huge id would make the id
  // tables below allocate gigabytes.
  const std::size_t num_entries = spec.vocab.size() + spec.added_tokens.size();
  if (static_cast<std::size_t>(max_id) + 1 > 2 * num_entries + 1024)
    return error_in(source, "token ids are implausibly sparse (largest " +
                                std::to_string(max_id) + " for " + std::to_string(num_entries) +
                                " tokens)");
  for (const auto& ids : {spec.prefix_ids, spec.suffix_ids})
    for (token_id id : ids)
      if (id < 0 || id > max_id)
        return error_in(source, "key 'post_processor': token id " + std::to_string(id) +
                                    " is not in the vocabulary");
  const auto n = static_cast<std::size_t>(max_id + 1);
  t.bytes_.resize(n);
  t.special_.resize(n);
  if (t.decoder_.first_token_differs()) t.first_bytes_.resize(n);
  auto set_text = [&t](token_id id, std::string_view token) {
    const auto i = static_cast<std::size_t>(id);
    t.bytes_[i] = t.decoder_.token_text(token, false);
    if (!t.first_bytes_.empty()) t.first_bytes_[i] = t.decoder_.token_text(token, true);
  };
  for (const auto& [symbols, id] : spec.vocab) set_text(id, symbols);
  // The rest of the spec stays; the vocabulary and merges are bpe_'s now.
  spec.vocab = {};
  spec.merges = {};
  t.spec_ = std::move(spec);
  t.added_lengths_by_first_byte_.resize(256);
  for (std::size_t i = 0; i < t.spec_.added_tokens.size(); ++i) {
    const auto& a = t.spec_.added_tokens[i];
    set_text(a.id, a.content);
    t.special_[static_cast<std::size_t>(a.id)] = a.special;
    // NOTE: a content listed twice keeps its first id, as the first match wins.
    t.added_by_content_.emplace(a.content, i);
    t.added_lengths_by_first_byte_[static_cast<uint8_t>(a.content[0])].push_back(a.content.size());
  }
  for (auto& lengths : t.added_lengths_by_first_byte_) {
    std::sort(lengths.begin(), lengths.end(), std::greater<>());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  }
  return t;
}

void tokenizer::encode_segment(std::string_view raw, bool at_text_start,
                               std::vector<token_id>& out) const {
  if (raw.empty()) return;
  std::string text = normalize(raw, spec_.normalizer);
  if (text.empty()) return;
  if (spec_.add_prefix_space && text.front() != ' ') text = " " + text;
  std::vector<std::string> owned;
  std::vector<std::string_view> pieces;
  if (spec_.metaspace_split) {
    owned = spec_.metaspace_split->pre_tokenize(text, at_text_start);
    pieces.assign(owned.begin(), owned.end());
  } else {
    pieces.push_back(text);
  }
  for (const auto& step : spec_.splits) {
    std::vector<std::string_view> next;
    for (auto p : pieces) {
      const auto split = std::holds_alternative<split_pattern>(step)
                           ? pre_split(p, std::get<split_pattern>(step))
                           : std::get<regex_split>(step).split(p);
      next.insert(next.end(), split.begin(), split.end());
    }
    pieces = std::move(next);
  }
  for (auto p : pieces) bpe_.encode_piece(p, out);
}

std::vector<token_id> tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<token_id> out;
  if (add_special_tokens) out = spec_.prefix_ids;
  std::size_t segment_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const added_token* hit = nullptr;
    for (std::size_t len : added_lengths_by_first_byte_[static_cast<uint8_t>(text[i])]) {
      if (len > text.size() - i) continue;
      auto it = added_by_content_.find(text.substr(i, len));
      if (it != added_by_content_.end()) {
        hit = &spec_.added_tokens[it->second];
        break; // longest first
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    const std::size_t segment_end = hit->lstrip ? skip_space_backward(text, segment_start, i) : i;
    encode_segment(text.substr(segment_start, segment_end - segment_start), segment_start == 0,
                   out);
    out.push_back(hit->id);
    i += hit->content.size();
    if (hit->rstrip) i = skip_space_forward(text, i);
    segment_start = i;
  }
  encode_segment(text.substr(segment_start), segment_start == 0, out);
  if (add_special_tokens) out.insert(out.end(), spec_.suffix_ids.begin(), spec_.suffix_ids.end());
  return out;
}

std::string tokenizer::decode(std::span<const token_id> ids, bool skip_special) const {
  std::string out;
  bool first = true;
  for (token_id id : ids) {
    if (skip_special && is_special(id)) continue;
    const bool known = id >= 0 && static_cast<std::size_t>(id) < bytes_.size();
    if (first && known && !first_bytes_.empty())
      out += first_bytes_[static_cast<std::size_t>(id)];
    else
      out += token_bytes(id);
    first = false;
  }
  decoder_.finish(out);
  return out;
}

std::string_view tokenizer::token_bytes(token_id id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= bytes_.size()) return {};
  return bytes_[static_cast<std::size_t>(id)];
}

bool tokenizer::is_special(token_id id) const {
  return id >= 0 && static_cast<std::size_t>(id) < special_.size() &&
         special_[static_cast<std::size_t>(id)];
}

std::optional<token_id> tokenizer::find(std::string_view token) const {
  if (auto it = added_by_content_.find(token); it != added_by_content_.end())
    return spec_.added_tokens[it->second].id;
  return bpe_.find(token);
}

} // namespace kvactor::model
