#include "tools/stress/worker_process.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kvactor::stress {

std::variant<worker_process, std::string>
worker_process::start(const std::string& serve, const std::vector<std::string>& args,
                      uint16_t port) {
  std::vector<std::string> all{serve};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--worker-port=" + std::to_string(port));
  std::vector<char*> argv;
  for (auto& a : all)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0)
    return std::string("pipe: ") + std::strerror(errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, out[1]);
  worker_process w;
  const int rc = posix_spawn(&w.pid_, serve.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    w.pid_ = -1;
    return serve + ": " + std::strerror(rc);
  }
  // Its first line names the port: "kvactor worker on 127.0.0.1:P".
  FILE* f = fdopen(out[0], "r");
  char line[256];
  std::string first = f && std::fgets(line, sizeof line, f) ? line : "";
  if (f)
    std::fclose(f); // the worker's later lines go nowhere (it writes none)
  const auto colon = first.rfind(':');
  if (first.rfind("kvactor worker on ", 0) != 0 || colon == std::string::npos)
    return serve + " did not start as a worker (see its messages above)";
  w.port_ = static_cast<uint16_t>(std::stoi(first.substr(colon + 1)));
  return w;
}

worker_process::worker_process(worker_process&& other) noexcept
  : pid_(other.pid_), port_(other.port_) {
  other.pid_ = -1;
}

worker_process& worker_process::operator=(worker_process&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = other.pid_;
    port_ = other.port_;
    other.pid_ = -1;
  }
  return *this;
}

worker_process::~worker_process() {
  kill();
}

void worker_process::kill() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int worker_process::stop() {
  if (pid_ <= 0)
    return -1;
  ::kill(pid_, SIGINT);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace kvactor::stress
