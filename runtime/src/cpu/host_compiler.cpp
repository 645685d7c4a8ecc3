#include "cpu/host_compiler.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

extern char** environ;

namespace spindle::rt::cpu {
namespace {

namespace fs = std::filesystem;

// `name` as an executable path: itself if it has a slash, else found on PATH.
std::optional<std::string> resolveExecutable(const std::string& name) {
  auto executable = [](const fs::path& p) { return access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (name.find('/') != std::string::npos) {
    if (!executable(name)) return std::nullopt;
    return fs::absolute(name).string();
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (executable(candidate)) return fs::absolute(candidate).string();
  }
  return std::nullopt;
}

// Runs argv[0] with stdout and stderr into `logPath`; the exit status, or -1
// when it could not start (errno-style message in `why`).
int runProcess(const std::vector<std::string>& argv, const std::string& logPath, std::string* why) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    if (why) *why = fmt::format("cannot run {}: {}", argv[0], std::strerror(rc));
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      if (why) *why = fmt::format("waiting for {}: {}", argv[0], std::strerror(errno));
      return -1;
    }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (why) *why = fmt::format("{} was killed by signal {}", argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A private directory under TMPDIR, removed when this goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "spindle-cpu-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error(fmt::format("mkdtemp: {}", std::strerror(errno)));
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

std::optional<HostCompiler> findHostCompiler(std::string* why) {
  std::vector<std::string> names;
  const char* env = std::getenv("SPINDLE_HOST_CXX");
  if (env && *env) names.push_back(env);
  else names = {"c++", "g++", "clang++"};
  for (const auto& name : names) {
    auto path = resolveExecutable(name);
    if (!path) continue;
    HostCompiler c{*path, {}};
    try {
      TempDir dir;
      std::string runWhy;
      const std::string log = (dir.path / "version.txt").string();
      if (runProcess({*path, "--version"}, log, &runWhy) != 0) {
        if (why) *why = fmt::format("{} --version failed{}", *path, runWhy.empty() ? "" : ": " + runWhy);
        return std::nullopt;
      }
      std::string text = readFile(log);
      c.identity = text.substr(0, text.find('\n')) + " (" + *path + ")";
    } catch (const std::exception& e) {
      if (why) *why = e.what();
      return std::nullopt;
    }
    return c;
  }
  if (why)
    *why = env && *env ? fmt::format("SPINDLE_HOST_CXX='{}' is not an executable (on PATH or as a path)", env)
                       : std::string(
                             "no host C++ compiler: none of c++, g++, clang++ is on PATH "
                             "(install one, or set SPINDLE_HOST_CXX)");
  return std::nullopt;
}

HostCompileResult compileSharedLibrary(const HostCompiler& compiler, const std::string& source,
                                       const std::string& fileName, const std::vector<std::string>& options) {
  HostCompileResult out;
  TempDir dir;
  const fs::path src = dir.path / fs::path(fileName).filename().replace_extension(".cpp");
  const fs::path lib = dir.path / "kernel.so";
  const fs::path log = dir.path / "log.txt";
  {
    std::ofstream f(src, std::ios::binary);
    f << source;
    if (!f) {
      out.log = fmt::format("cannot write {}", src.string());
      return out;
    }
  }
  std::vector<std::string> argv{compiler.path};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"-o", lib.string(), src.string()});
  std::string why;
  int rc = runProcess(argv, log.string(), &why);
  out.log = readFile(log);
  if (rc != 0) {
    if (!why.empty()) out.log += why;
    return out;
  }
  std::string bytes = readFile(lib);
  out.library.assign(bytes.begin(), bytes.end());
  out.ok = !out.library.empty();
  if (!out.ok) out.log += "the compiler wrote no library";
  return out;
}

}  // namespace spindle::rt::cpu
