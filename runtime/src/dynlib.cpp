#include "dynlib.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>

namespace spindle::rt {

DynLib::~DynLib() {
  // Deliberately not dlclose'd: GPU runtimes register atexit handlers and
  // threads that must not outlive their code.
}

bool DynLib::open(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const auto& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      handle_ = h;
      path_ = c;
      return true;
    }
    const char* why = dlerror();
    tried += fmt::format("\n  {}: {}", c, why ? why : "not found");
  }
  error_ = "could not load any of:" + tried;
  return false;
}

std::string DynLib::realPath() const {
  link_map* map = nullptr;
  if (!handle_ || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return path_;
  char resolved[PATH_MAX];
  return realpath(map->l_name, resolved) ? std::string(resolved) : std::string(map->l_name);
}

uint64_t fileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

std::string baseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parentDir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

void* DynLib::raw(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

}  // namespace spindle::rt
