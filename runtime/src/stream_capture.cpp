#include "stream_capture.h"

#include <fmt/format.h>

namespace spindle::rt {

std::string captureRefusal(CaptureStatus status, bool loaded, const std::string& kernel, const Specialization& spec) {
  if (status == CaptureStatus::None || loaded) return {};
  // The flags `spindle compile` takes for this binary, without the options
  // every binary of the runtime shares.
  std::string flags;
  for (const auto& f : specializationFlags(spec)) {
    if (f == "--no-line-directives" || f == "--checked" || f == "--index32") continue;
    flags += (flags.empty() ? "" : " ") + f;
  }
  return fmt::format(
      "{}: cannot launch during CUDA graph capture: specialization [{}] is not compiled and loaded yet, and "
      "compiling or loading a module is not allowed while the stream is being captured{}; launch it once (or call "
      "compile_for / Kernel::compileFor with the same arguments) before capturing",
      kernel, flags.empty() ? "no static dims, dtypes or layout facts" : flags,
      status == CaptureStatus::Invalidated ? " (the capture is already invalidated)" : "");
}

}  // namespace spindle::rt
