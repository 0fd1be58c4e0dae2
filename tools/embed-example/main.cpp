// kvactor-embed-example: a host CAF application with actors of its own that
// spawns kvactor into its actor system, submits several requests at once,
// cancels one, prints the streamed text and the runtime's figures, and shuts
// kvactor down so the host's system can terminate.
//
//   kvactor-embed-example --model=DIR

#include <kvactor/kvactor.hpp>

#include <iostream>
#include <map>
#include <string>

namespace {

using report_atom = caf::atom_constant<caf::atom("report")>;

// The host's own actor: one per request, prints what arrives and tells the
// coordinator when its request is done.
kvactor::sink_actor::behavior_type printer(kvactor::sink_actor::pointer self, std::string name,
                                           caf::actor coordinator) {
  return {
    [=](const kvactor::token_event& ev) {
      if (!ev.text.empty())
        caf::aout(self) << "[" << name << "] +" << ev.text << "\n";
    },
    [=](const kvactor::done_event& done) {
      const std::string why(to_string(done.finish_reason));
      caf::aout(self) << "[" << name << "] done: " << why << ", " << done.completion_tokens
                      << " tokens, text \"" << done.text << "\"\n";
      caf::anon_send(coordinator, report_atom::value, name, why);
      self->quit();
    },
  };
}

struct host_config : caf::actor_system_config {
  std::string model;
  host_config() {
    kvactor::add_message_types(*this);
    opt_group{custom_options_, "global"}.add(model, "model", "a model folder");
  }
};

void caf_main(caf::actor_system& sys, const host_config& cfg) {
  kvactor::engine_config engine;
  engine.model_dir = cfg.model;
  engine.kv_cache_bytes = 32 << 20;
  auto runtime = kvactor::spawn_runtime(sys, engine);
  if (!runtime) {
    std::cerr << "cannot start kvactor: " << sys.render(runtime.error()) << "\n";
    return;
  }
  const std::map<std::string, std::string> prompts = {
    {"alpha", "The cat sat on"}, {"beta", "Once upon a time"}, {"gamma", "In the morning"}};

  // The coordinator: submits, cancels one, waits for every done, then
  // prints the figures and shuts kvactor down.
  sys.spawn([=](caf::event_based_actor* self) -> caf::behavior {
    auto pending = std::make_shared<size_t>(prompts.size());
    for (const auto& [name, prompt] : prompts) {
      kvactor::generate_request req;
      req.prompt = prompt;
      req.max_tokens = name == "gamma" ? 200 : 12;
      auto sink = self->spawn(printer, name, caf::actor{self});
      self->request(*runtime, caf::infinite, kvactor::generate_atom::value, req, sink)
        .then([=](const kvactor::admission& a) {
          if (!a.ok()) {
            caf::aout(self) << "[" << name << "] refused (" << kvactor::to_string(a.error_code)
                            << "): " << a.error_message << "\n";
            return;
          }
          if (name == "gamma") // changed our mind
            self->send(*runtime, kvactor::cancel_atom::value, a.id);
        });
    }
    return {
      [=](report_atom, const std::string&, const std::string&) {
        if (--*pending > 0)
          return;
        self->request(*runtime, caf::infinite, kvactor::figures_atom::value)
          .then([=](const kvactor::runtime_figures& f) {
            caf::aout(self) << "figures: finished " << f.requests_finished << ", aborted "
                            << f.requests_aborted << ", tokens " << f.tokens_generated
                            << ", device blocks used " << f.device_blocks_used << " of "
                            << f.device_blocks_total << ", invariants "
                            << (f.broken_invariants.empty() ? "sound" : "BROKEN") << "\n";
            self->request(*runtime, caf::infinite, kvactor::shutdown_atom::value)
              .then([=](bool) {
                caf::aout(self) << "kvactor shut down\n";
                self->quit();
              });
          });
      },
    };
  });
}

} // namespace

CAF_MAIN()
