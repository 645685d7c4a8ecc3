#include "handwritten.hpp"

#include <stdexcept>

namespace parity {

std::vector<char> compileHandwritten(const Nvrtc& nvrtc, const std::string& file, const std::string& arch,
                                     const std::vector<std::string>& defines) {
  const char* source = nullptr;
  std::vector<std::pair<std::string, std::string>> headers;
  for (const EmbeddedFile& f : embeddedFiles()) {
    const std::string name = f.name;
    if (name == file) source = f.text;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".cuh") == 0) headers.emplace_back(name, f.text);
  }
  if (!source) throw std::runtime_error("no hand-written file " + file + " (bench/parity/handwritten/)");
  std::vector<std::string> options;
  for (const auto& d : defines) options.push_back("-D" + d);
  return nvrtc.compile(source, file, arch, headers, options);
}

CUfunction HandwrittenModules::function(const std::string& file, const std::string& kernel,
                                        const std::vector<std::string>& defines) {
  std::string key = file;
  for (const auto& d : defines) key += " -D" + d;
  auto it = modules_.find(key);
  if (it == modules_.end())
    it = modules_.emplace(key, driver_->loadModule(compileHandwritten(nvrtc_, file, arch_, defines))).first;
  return driver_->function(it->second, kernel);
}

}  // namespace parity
