// Objects and arrays of a schema. Both are chains of positions, each a
// sequence of what is still to come given whether something was written
// before it (then it starts with a comma):
//
//   {"a" required, "b" optional, "c" optional}, no additional properties
//   rest(c, w)  ::= [w ? comma] "c" colon value | ""
//   rest(b, w)  ::= [w ? comma] "b" colon value rest(c, yes) | rest(c, w)
//   object      ::= "{" "a" colon value rest(b, yes) "}"

#include "model/grammar/json_schema_compiler.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace kvactor::model {

namespace {

struct property {
  std::string name;
  grammar_element value;
  bool required = false;
};

bool is_false(simdjson::dom::element e) {
  bool b = true;
  return !e.get_bool().get(b) && !b;
}

} // namespace

result<grammar_element> json_schema_compiler::object(simdjson::dom::object s,
                                                     const std::string& path) {
  simdjson::dom::object properties;
  const std::optional<simdjson::dom::element> listed = member(s, "properties");
  if (listed && listed->get_object().get(properties))
    return schema_error(path, "properties must be an object of schemas");
  std::vector<std::string_view> required;
  if (const std::optional<simdjson::dom::element> names = member(s, "required")) {
    simdjson::dom::array list;
    if (names->get_array().get(list))
      return schema_error(path, "required must be a list of property names");
    for (simdjson::dom::element name : list) {
      std::string_view n;
      if (name.get_string().get(n))
        return schema_error(path, "required must be a list of property names");
      required.push_back(n);
    }
  }
  // NOTE: without additionalProperties, an object with properties has only
  // those (what clients mean, and what OpenAI's strict mode writes); one
  // without properties is any object. Additional keys are any string: one
  // that repeats a listed name is not kept out.
  std::optional<grammar_element> additional;
  const std::optional<simdjson::dom::element> more = member(s, "additionalProperties");
  if (more && !is_false(*more)) {
    result<grammar_element> e = compile(*more, path + ".additionalProperties");
    if (!e) return e.error();
    additional = *e;
  } else if (!more && !listed) {
    additional = parts_.value();
  }
  // NOTE: sets, not searches of the lists: a client's schema may name tens
  // of thousands of properties.
  const std::unordered_set<std::string_view> required_names(required.begin(), required.end());
  std::unordered_set<std::string_view> chained;
  std::vector<property> chain;
  if (listed)
    for (const simdjson::dom::key_value_pair& kv : properties) {
      const bool is_required = required_names.contains(kv.key);
      if (is_false(kv.value) && !is_required) continue; // must be absent: left out
      result<grammar_element> e = compile(kv.value, path + ".properties." + std::string(kv.key));
      if (!e) return e.error();
      chain.push_back({std::string(kv.key), *e, is_required});
      chained.insert(kv.key);
    }
  for (std::string_view name : required) {
    if (!chained.insert(name).second) continue;
    if (!additional)
      return schema_error(path,
                          "required names '" + std::string(name) + "', which is not in properties");
    chain.push_back({std::string(name), *additional, true});
  }

  // rest[i][w]: properties i.. (then the additional ones), w: one was written.
  constexpr size_t max_inline = 256;
  std::vector<std::array<grammar_sequence, 2>> rest(chain.size() + 1);
  if (additional) {
    const grammar_element pair =
      b_.any_of("member", {{parts_.string(), parts_.colon(), *additional}});
    result<grammar_element> pairs = b_.repeat({parts_.comma(), pair}, 0, -1);
    if (!pairs) return pairs.error();
    rest.back()[1] = {*pairs};
    rest.back()[0] = {b_.any_of("members", {{pair, *pairs}, {}})};
  }
  for (size_t i = chain.size(); i-- > 0;)
    for (int written = 0; written < 2; ++written) {
      grammar_sequence seq;
      if (written) seq.push_back(parts_.comma());
      for (grammar_element e : b_.literal(json::quote(chain[i].name))) seq.push_back(e);
      seq.push_back(parts_.colon());
      seq.push_back(chain[i].value);
      seq.insert(seq.end(), rest[i + 1][1].begin(), rest[i + 1][1].end());
      // NOTE: what follows a required property is written out in place
      // (fewer stack nodes, faster masks) while that stays short; past
      // max_inline slots it is a rule the ones before refer to: written out
      // whole, each would copy all after it, a grammar quadratic in their
      // number (6,000 required properties took 3.8 s and gigabytes).
      if (chain[i].required)
        rest[i][written] = seq.size() <= max_inline
                             ? std::move(seq)
                             : grammar_sequence{b_.any_of("property", {std::move(seq)})};
      else
        rest[i][written] = {b_.any_of("property", {std::move(seq), rest[i + 1][written]})};
    }
  grammar_sequence whole = {b_.byte('{')};
  whole.insert(whole.end(), rest[0][0].begin(), rest[0][0].end());
  whole.push_back(b_.byte('}'));
  return b_.any_of("object", {std::move(whole)});
}

result<grammar_element> json_schema_compiler::array(simdjson::dom::object s,
                                                    const std::string& path) {
  std::optional<grammar_element> item = parts_.value();
  if (const std::optional<simdjson::dom::element> items = member(s, "items")) {
    if (items->type() == simdjson::dom::element_type::ARRAY)
      return schema_error(path, "items must be a schema (a list of them is prefixItems)");
    if (is_false(*items)) {
      item.reset();
    } else {
      result<grammar_element> e = compile(*items, path + ".items");
      if (!e) return e.error();
      item = *e;
    }
  }
  std::vector<grammar_element> prefix;
  if (const std::optional<simdjson::dom::element> listed = member(s, "prefixItems")) {
    simdjson::dom::array list;
    if (listed->get_array().get(list))
      return schema_error(path, "prefixItems must be a list of schemas");
    for (simdjson::dom::element e : list) {
      result<grammar_element> p =
        compile(e, path + ".prefixItems." + std::to_string(prefix.size()));
      if (!p) return p.error();
      prefix.push_back(*p);
    }
  }
  result<int64_t> min = schema_count(s, "minItems", path);
  if (!min) return min.error();
  result<int64_t> max = schema_count(s, "maxItems", path);
  if (!max) return max.error();
  const auto k = static_cast<int64_t>(prefix.size());
  int64_t lo = std::max<int64_t>(*min, 0), hi = *max; // hi < 0: no bound
  if (!item) hi = hi < 0 ? k : std::min(hi, k);
  if (hi >= 0 && lo > hi)
    return schema_error(path, "minItems over maxItems (or prefixItems with items false) "
                              "accepts nothing");

  // rest[i]: positions i.. ; after the prefix, items repeated.
  std::vector<grammar_sequence> rest(prefix.size() + 1);
  const int64_t tail_lo = std::max<int64_t>(lo - k, 0),
                tail_hi = hi < 0 ? -1 : std::max<int64_t>(hi - k, 0);
  if (tail_hi != 0) {
    const int64_t more_lo = k > 0 ? tail_lo : std::max<int64_t>(tail_lo - 1, 0);
    const int64_t more_hi = k > 0 || tail_hi < 0 ? tail_hi : tail_hi - 1;
    result<grammar_element> more = b_.repeat({parts_.comma(), *item}, more_lo, more_hi);
    if (!more) return schema_error(path, "minItems/maxItems: " + more.error().message);
    if (k > 0)
      rest[prefix.size()] = {*more};
    else if (tail_lo > 0)
      rest[0] = {*item, *more};
    else
      rest[0] = {b_.any_of("items", {{*item, *more}, {}})};
  }
  for (size_t i = prefix.size(); i-- > 0;) {
    if (hi >= 0 && static_cast<int64_t>(i) >= hi) continue; // no position i: nothing
    grammar_sequence seq;
    if (i > 0) seq.push_back(parts_.comma());
    seq.push_back(prefix[i]);
    seq.insert(seq.end(), rest[i + 1].begin(), rest[i + 1].end());
    if (static_cast<int64_t>(i) < lo)
      rest[i] = std::move(seq);
    else
      rest[i] = {b_.any_of("prefix-item", {std::move(seq), {}})};
  }
  grammar_sequence whole = {b_.byte('[')};
  whole.insert(whole.end(), rest[0].begin(), rest[0].end());
  whole.push_back(b_.byte(']'));
  return b_.any_of("array", {std::move(whole)});
}

} // namespace kvactor::model
