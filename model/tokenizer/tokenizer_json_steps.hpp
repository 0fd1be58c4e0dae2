#pragma once
// The pipeline sections of tokenizer.json — "normalizer", "pre_tokenizer",
// "post_processor", "decoder" — read into a tokenizer_spec. A component
// kvactor does not run is refused with its section and type named.

#include <simdjson.h>

#include "base/result.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"

namespace kvactor::model {

// `key` is the section's name; `v` its (non-null) value.
status parse_pipeline_section(simdjson::ondemand::value v, const std::string& key,
                              tokenizer_spec& spec, std::string_view where);

} // namespace kvactor::model
