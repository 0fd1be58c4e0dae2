#pragma once
// worker_process: a `kvactor-serve --worker-port` child process for the
// cluster mode — started (its port read from its first line), killed
// (SIGKILL, as a crash), restarted on the same port, stopped (SIGINT).

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <variant>
#include <vector>

namespace kvactor::stress {

class worker_process {
public:
  // Starts `serve` with `args` and --worker-port=port (0: any free one);
  // the running worker, or an error message.
  static std::variant<worker_process, std::string> start(const std::string& serve,
                                                         const std::vector<std::string>& args,
                                                         uint16_t port);
  worker_process(worker_process&& other) noexcept;
  worker_process& operator=(worker_process&& other) noexcept;
  ~worker_process();

  uint16_t port() const { return port_; }
  // SIGKILL, and reaps it.
  void kill();
  // SIGINT, and waits for its exit; its exit status (-1 if it had none).
  int stop();

private:
  worker_process() = default;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

} // namespace kvactor::stress
