#include "net/token_fields.hpp"

#include <charconv>
#include <limits>
#include <string_view>

namespace kvactor::net {

namespace od = simdjson::ondemand;

namespace {

// A decimal token id as a key spells it ("-1" too, which the rule then
// refuses by its own words), or nullopt.
std::optional<int32_t> token_id_of(std::string_view key) {
  int64_t id = 0;
  const char* end = key.data() + key.size();
  auto [at, err] = std::from_chars(key.data(), end, id);
  if (err != std::errc() || at != end || id < std::numeric_limits<int32_t>::min() ||
      id > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  return static_cast<int32_t>(id);
}

// A bias as stored; one beyond a float's range becomes an infinity (which
// the rule refuses) rather than a cast out of range.
float as_float(double bias) {
  constexpr double most = std::numeric_limits<float>::max();
  if (bias > most || bias < -most)
    return bias > 0 ? std::numeric_limits<float>::infinity()
                    : -std::numeric_limits<float>::infinity();
  return static_cast<float>(bias);
}

} // namespace

std::optional<field_fault> read_logit_bias(od::value v, generate_request& req) {
  const field_fault shape{true, "an object mapping token ids (decimal strings) to numbers"};
  od::object o;
  if (v.get_object().get(o))
    return shape;
  std::vector<logit_bias_entry> bias;
  for (auto field : o) {
    std::string_view key;
    double value = 0;
    if (field.unescaped_key().get(key))
      return shape;
    const auto id = token_id_of(key);
    if (!id || field.value().get_double().get(value))
      return shape;
    // NOTE: one past the limit is enough for the rule to refuse the count;
    // reading further would only grow the list.
    bias.push_back({*id, as_float(value)});
    if (bias.size() > size_t(max_logit_bias))
      break;
  }
  if (auto wrong = check_logit_bias(bias))
    return field_fault{false, std::move(*wrong)};
  req.logit_bias = std::move(bias);
  return std::nullopt;
}

std::optional<field_fault> read_stop_token_ids(od::value v, generate_request& req) {
  const field_fault shape{true, "an array of token ids"};
  od::array a;
  if (v.get_array().get(a))
    return shape;
  std::vector<int32_t> ids;
  for (auto item : a) {
    int64_t t = 0;
    if (item.get_int64().get(t) || t < std::numeric_limits<int32_t>::min() ||
        t > std::numeric_limits<int32_t>::max())
      return shape;
    ids.push_back(static_cast<int32_t>(t));
  }
  if (auto wrong = check_stop_token_ids(ids))
    return field_fault{false, std::move(*wrong)};
  req.stop_token_ids = std::move(ids);
  return std::nullopt;
}

} // namespace kvactor::net
