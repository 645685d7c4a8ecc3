// Launches inside CUDA graph (stream) capture. A captured launch is recorded,
// not run, and capture forbids what a cache miss does: compiling takes
// seconds, and loading a module (cuModuleLoadData) is an operation capture
// refuses, invalidating the user's whole graph. So a launch on a capturing
// stream uses only a binary this process has already loaded (the memory
// cache); any other specialization is refused with a message naming the
// kernel and the specialization, before any driver call, so the capture
// stays valid and the caller can warm the cache and capture again.
#pragma once

#include <spindle/specialization.h>

#include <string>

namespace spindle::rt {

// cuStreamIsCapturing's answer (hipStreamIsCapturing's likewise).
enum class CaptureStatus { None, Active, Invalidated };

// Why a launch of `kernel` with specialization `spec` may not go on while its
// stream is in `status`; empty when it may. `loaded`: the specialization's
// binary is in the memory cache and loaded on the device (the launch needs
// neither the compiler, the disk cache nor the module loader).
std::string captureRefusal(CaptureStatus status, bool loaded, const std::string& kernel, const Specialization& spec);

}  // namespace spindle::rt
