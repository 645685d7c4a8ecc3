#include "ubsan_host.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace spindle::cpu_fuzz {

namespace fs = std::filesystem;

namespace {

// The first line `command` prints, "" if it fails.
std::string firstLine(const std::string& command) {
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return "";
  char line[4096] = {0};
  const bool read = std::fgets(line, sizeof line, pipe) != nullptr;
  const int status = pclose(pipe);
  std::string text = read && status == 0 ? line : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

UbsanHost::UbsanHost() {
  std::string pattern = (fs::temp_directory_path() / "spindle_fuzz_ubsan_XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  // clang instruments in its front end, so it also reports an overflow in a
  // value the optimizer then drops (g++ instruments after that). Its
  // sanitizer runtime is a shared library the kernel's library must find.
  const char* chosen = std::getenv("SPINDLE_HOST_CXX");
  std::string compiler = chosen && *chosen ? chosen : "";
  std::string flags = "-fsanitize=undefined -fno-sanitize=vptr";
  if (compiler.empty() && !firstLine("command -v clang++").empty()) {
    compiler = "clang++";
    const std::string runtime = firstLine("clang++ -print-file-name=libclang_rt.ubsan_standalone-x86_64.so");
    if (runtime.find('/') != std::string::npos)
      flags += " -shared-libsan -Wl,-rpath," + fs::path(runtime).parent_path().string();
    else compiler.clear();
  }
  if (compiler.empty()) compiler = "c++";
  const std::string wrapper = dir_ + "/c++";
  std::ofstream(wrapper) << "#!/bin/sh\nexec " << compiler << " \"$@\" " << flags << "\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  setenv("SPINDLE_HOST_CXX", wrapper.c_str(), 1);
}

UbsanHost::~UbsanHost() {
  takeReports();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void UbsanHost::begin() {
  std::fflush(stderr);
  savedStderr_ = dup(2);
  const int file = open((dir_ + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (savedStderr_ < 0 || file < 0) throw std::runtime_error("cannot redirect stderr");
  dup2(file, 2);
  close(file);
}

std::string UbsanHost::takeReports() {
  if (savedStderr_ < 0) return "";
  std::fflush(stderr);
  dup2(savedStderr_, 2);
  close(savedStderr_);
  savedStderr_ = -1;
  std::ifstream in(dir_ + "/stderr");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  std::fputs(all.c_str(), stderr);
  return all.find("runtime error:") != std::string::npos ? all : "";
}

}  // namespace spindle::cpu_fuzz
