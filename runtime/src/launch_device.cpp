#include "launch_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace spindle::rt {

namespace {
// A tensor argument's device, or -1 (not a tensor, absent, or unknown).
int deviceOf(const Arg& a, const std::function<int(const void*)>& pointerDevice) {
  if (a.kind != Arg::Kind::Tensor || !a.data) return -1;
  return a.device >= 0 ? a.device : pointerDevice(a.data);
}
}  // namespace

int launchDevice(const KernelPlan& plan, const Arg* args, size_t count, int deviceCount, int fallback,
                 const std::function<int(const void*)>& pointerDevice) {
  // bindArguments has checked the arity: args[i] is parameter i. Nothing is
  // stored on the way: the error path asks again.
  size_t n = std::min(count, plan.params.size());
  int chosen = -1;
  bool mixed = false;
  for (size_t i = 0; i < n; ++i) {
    int d = deviceOf(args[i], pointerDevice);
    if (d < 0) continue;
    if (d >= deviceCount)
      throw Error(fmt::format("{}: parameter '{}' is on device {}, but the machine has {} device{}", plan.kernel,
                              plan.params[i].name, d, deviceCount, deviceCount == 1 ? "" : "s"));
    if (chosen < 0) chosen = d;
    else if (d != chosen) mixed = true;
  }
  if (!mixed) return chosen < 0 ? fallback : chosen;

  std::vector<int> devices(n);
  std::vector<int> order;  // each device once, in the order the parameters show them
  for (size_t i = 0; i < n; ++i) {
    devices[i] = deviceOf(args[i], pointerDevice);
    if (devices[i] >= 0 && std::find(order.begin(), order.end(), devices[i]) == order.end())
      order.push_back(devices[i]);
  }
  std::string where;
  for (int d : order) {
    std::string names;
    for (size_t i = 0; i < n; ++i)
      if (devices[i] == d) names += (names.empty() ? "" : ", ") + plan.params[i].name;
    where += fmt::format("{}device {}: {}", where.empty() ? "" : "; ", d, names);
  }
  throw Error(
      fmt::format("{}: tensor arguments on different devices ({}); a launch runs on one device, move them "
                  "to one (nothing was launched)",
                  plan.kernel, where));
}

void checkStreamDevice(const KernelPlan& plan, const void* stream, int streamDevice, int device) {
  if (streamDevice < 0 || streamDevice == device) return;
  throw Error(
      fmt::format("{}: the stream {} belongs to device {}, but the tensors are on device {}; pass a stream "
                  "of device {} (nothing was launched)",
                  plan.kernel, stream, streamDevice, device, device));
}

}  // namespace spindle::rt
