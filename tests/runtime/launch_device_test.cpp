// Which device a launch runs on with several GPUs (launch_device.h): the
// rule and its errors, with a fake driver answer for pointers, so machines
// without GPUs test what a 2-GPU machine decides.
#include <gtest/gtest.h>

#include <map>

#include "../../runtime/src/launch_device.h"
#include "spindle/generator.h"
#include "test_util.h"

namespace spindle {
namespace {

using test::errorFrom;
using test::scalarParam;
using test::tensorParam;

constexpr ScalarType F32 = ScalarType::F32;

// add(x: f32[N], y: f32[N], out: f32[N], bias: f32[N] | None, a: f32)
rt::KernelPlan addPlan() {
  KernelInfo k;
  k.name = "add";
  KernelParamInfo bias = tensorParam("bias", F32, {"N"});
  bias.optional = true;
  k.params = {tensorParam("x", F32, {"N"}), tensorParam("y", F32, {"N"}), tensorParam("out", F32, {"N"}), bias,
              scalarParam("a", F32)};
  k.dimSymbols = {"N"};
  return rt::KernelPlan::make(k, {});
}

// Distinct addresses standing for allocations on some device.
char memory[4][64];

// The driver's answer, from a table (unlisted pointers: it cannot tell).
struct FakeDriver {
  std::map<const void*, int> where;
  int asked = 0;
  std::function<int(const void*)> query() {
    return [this](const void* p) {
      ++asked;
      auto it = where.find(p);
      return it == where.end() ? -1 : it->second;
    };
  }
};

Arg on(const void* p, int device = -1) {
  Arg a = tensor(p, F32, {16});
  a.device = int16_t(device);
  return a;
}

TEST(LaunchDevice, ArgDevicesGiven_NoDriverQuestion) {
  rt::KernelPlan plan = addPlan();
  FakeDriver drv;
  Arg args[] = {on(memory[0], 1), on(memory[1], 1), on(memory[2], 1), none(), scalar(2.0f)};
  EXPECT_EQ(rt::launchDevice(plan, args, 5, 2, 0, drv.query()), 1);
  EXPECT_EQ(drv.asked, 0);
}

TEST(LaunchDevice, UnknownDevices_AskTheDriver) {
  rt::KernelPlan plan = addPlan();
  FakeDriver drv;
  drv.where = {{memory[0], 1}, {memory[1], 1}, {memory[2], 1}};
  Arg args[] = {on(memory[0]), on(memory[1]), on(memory[2]), none(), scalar(2.0f)};
  EXPECT_EQ(rt::launchDevice(plan, args, 5, 2, 0, drv.query()), 1);
  EXPECT_EQ(drv.asked, 3);
}

TEST(LaunchDevice, NothingKnown_TheRuntimesDevice) {
  rt::KernelPlan plan = addPlan();
  FakeDriver drv;  // host or unregistered memory everywhere
  Arg args[] = {on(memory[0]), on(memory[1]), on(memory[2]), none(), scalar(2.0f)};
  EXPECT_EQ(rt::launchDevice(plan, args, 5, 4, 3, drv.query()), 3);
  EXPECT_EQ(rt::launchDevice(plan, args, 5, 4, 0, drv.query()), 0);
}

TEST(LaunchDevice, UnknownPointerBesideKnownOnes_DecidesNothing) {
  rt::KernelPlan plan = addPlan();
  FakeDriver drv;
  drv.where = {{memory[1], 2}};
  Arg args[] = {on(memory[0]), on(memory[1]), on(memory[2], 2), none(), scalar(2.0f)};
  EXPECT_EQ(rt::launchDevice(plan, args, 5, 4, 0, drv.query()), 2);
}

TEST(LaunchDevice, MixedDevices_ErrorNamesEveryDeviceAndItsParameters) {
  rt::KernelPlan plan = addPlan();
  FakeDriver drv;
  drv.where = {{memory[3], 1}};
  Arg args[] = {on(memory[0], 0), on(memory[1], 1), on(memory[2], 0), on(memory[3]), scalar(2.0f)};
  std::string e = errorFrom([&] { rt::launchDevice(plan, args, 5, 2, 0, drv.query()); });
  EXPECT_NE(e.find("add: tensor arguments on different devices (device 0: x, out; device 1: y, bias)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("nothing was launched"), std::string::npos) << e;
}

TEST(LaunchDevice, DeviceTheMachineLacks_Error) {
  rt::KernelPlan plan = addPlan();
  FakeDriver drv;
  Arg args[] = {on(memory[0], 0), on(memory[1], 2), on(memory[2], 0), none(), scalar(2.0f)};
  std::string e = errorFrom([&] { rt::launchDevice(plan, args, 5, 2, 0, drv.query()); });
  EXPECT_NE(e.find("add: parameter 'y' is on device 2, but the machine has 2 devices"), std::string::npos) << e;
}

TEST(LaunchDevice, StreamOfAnotherDevice_Error) {
  rt::KernelPlan plan = addPlan();
  int s = 0;
  EXPECT_EQ(errorFrom([&] { rt::checkStreamDevice(plan, &s, 1, 1); }), "(no error)");
  EXPECT_EQ(errorFrom([&] { rt::checkStreamDevice(plan, &s, -1, 1); }), "(no error)");  // cannot tell
  std::string e = errorFrom([&] { rt::checkStreamDevice(plan, &s, 0, 1); });
  EXPECT_NE(e.find("belongs to device 0, but the tensors are on device 1"), std::string::npos) << e;
}

// Arg::device fits padding: the launch path copies no more bytes than before.
TEST(LaunchDevice, ArgKeepsItsSize) {
  struct Before {  // Arg's layout without the field
    Arg::Kind kind;
    ScalarType dtype;
    const void* data;
    int rank;
    bool hasStrides;
    int64_t shape[kMaxRank];
    int64_t strides[kMaxRank];
    uint64_t bits;
  };
  EXPECT_EQ(sizeof(Arg), sizeof(Before));
  EXPECT_EQ(tensor(memory[0], F32, {4}).device, -1);
}

}  // namespace
}  // namespace spindle
