// Which device a launch runs on, on a machine with more than one (CUDA):
// the device its tensors live on. Kept apart from the backend so that the
// rule (and its error) is tested on machines without GPUs
// (tests/runtime/launch_device_test.cpp). A one-device machine never calls
// it: the launch path there asks nothing of the arguments or the driver.
#pragma once

#include <spindle/runtime.hpp>

#include <functional>

#include "launch_binding.h"

namespace spindle::rt {

// The device of every tensor argument: Arg::device where the caller set it
// (the Python package does, from torch or DLPack), else
// `pointerDevice(data)`, the driver's answer (cuPointerGetAttribute); -1
// from it means it cannot tell (host or unregistered memory), and such a
// tensor decides nothing. No tensor with a known device: `fallback` (the
// runtime's device). Tensors on two devices, or a device at or past
// `deviceCount`, throw spindle::Error naming the kernel, each device and
// the parameters on it; nothing has been launched then.
int launchDevice(const KernelPlan& plan, const Arg* args, size_t count, int deviceCount, int fallback,
                 const std::function<int(const void*)>& pointerDevice);

// `streamDevice`: the device of the launch's stream (-1: it cannot tell, or
// a handle that means the current context's stream: 0, the legacy and the
// per-thread default stream). Throws spindle::Error when it is another
// device than `device`.
void checkStreamDevice(const KernelPlan& plan, const void* stream, int streamDevice, int device);

}  // namespace spindle::rt
