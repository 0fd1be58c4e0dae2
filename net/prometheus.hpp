#pragma once
// prometheus: the runtime's figures in Prometheus' text exposition format
// (version 0.0.4), for GET /metrics. Names follow vLLM's where one exists,
// under the kvactor: prefix; every sample carries the model_name label.

#include "kvactor/kvactor.hpp"

#include <string>
#include <string_view>

namespace kvactor::net {

inline constexpr std::string_view prometheus_content_type =
  "text/plain; version=0.0.4; charset=utf-8";

std::string format_metrics(const runtime_figures& f, std::string_view model_name);

} // namespace kvactor::net
