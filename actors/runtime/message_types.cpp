// add_message_types: announces every message type kvactor's actors exchange
// and kvactor's error category; use_serving_scheduler: the scheduler
// settings for serving.

#include "actors/runtime/messages.hpp"

namespace kvactor {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<generate_request>("kvactor.generate_request");
  cfg.add_message_type<admission>("kvactor.admission");
  cfg.add_message_type<token_event>("kvactor.token_event");
  cfg.add_message_type<done_event>("kvactor.done_event");
  cfg.add_message_type<runtime_figures>("kvactor.runtime_figures");
  cfg.add_message_type<worker_figures>("kvactor.worker_figures");
  cfg.add_message_type<std::vector<worker_figures>>("kvactor.worker_figures_list");
  cfg.add_message_type<token_logprob>("kvactor.token_logprob");
  cfg.add_message_type<std::vector<token_logprob>>("kvactor.token_logprobs");
  cfg.add_message_type<histogram>("kvactor.histogram");
  cfg.add_message_type<sink_actor>("kvactor.sink_actor");
  cfg.add_message_type<runtime_actor>("kvactor.runtime_actor");
  cfg.add_message_type<step_plan>("kvactor.step_plan");
  cfg.add_message_type<step_output>("kvactor.step_output");
  cfg.add_message_type<sequence_update>("kvactor.sequence_update");
  cfg.add_message_type<reservation_result>("kvactor.reservation_result");
  cfg.add_message_type<std::vector<reservation_entry>>("kvactor.reservation_entries");
  cfg.add_message_type<swap_order>("kvactor.swap_order");
  cfg.add_message_type<submission>("kvactor.submission");
  cfg.add_message_type<pool_figures>("kvactor.pool_figures");
  cfg.add_message_type<host_figures>("kvactor.host_figures");
  cfg.add_message_type<scheduler_figures>("kvactor.scheduler_figures");
  cfg.add_message_type<std::vector<block_id>>("kvactor.block_ids");
  cfg.add_message_type<std::vector<std::string>>("kvactor.strings");
  cfg.add_error_category(error_category,
                         [](uint8_t code, caf::atom_value, const caf::message& context) {
                           std::string out = to_string(static_cast<errc>(code));
                           if (context.match_elements<std::string>())
                             out += ": " + context.get_as<std::string>(0);
                           return out;
                         });
}

void use_serving_scheduler(caf::actor_system_config& cfg) {
  cfg.set("work-stealing.moderate-poll-attempts", 0);
}

} // namespace kvactor
