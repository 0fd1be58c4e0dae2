#pragma once
// Reading the fields of a request body that name token ids, by their rules
// in request_fields: logit_bias in OpenAI's shape, an object whose keys are
// token ids as decimal strings and whose values are numbers
// ({"50256": -100}), and stop_token_ids, an array of integers. Both front
// doors' parsers read them so; faults as numeric_fields words them.

#include "net/numeric_fields.hpp"

#include <simdjson.h>

#include <optional>

namespace kvactor::net {

// Reads `v` into req.logit_bias; nullopt when stored.
std::optional<field_fault> read_logit_bias(simdjson::ondemand::value v, generate_request& req);

// Reads `v` into req.stop_token_ids; nullopt when stored.
std::optional<field_fault> read_stop_token_ids(simdjson::ondemand::value v,
                                               generate_request& req);

} // namespace kvactor::net
