// The graph-capture rule of Kernel::launch (runtime/src/stream_capture.h): on
// a capturing stream only a loaded binary launches; a miss is refused with a
// message that names the kernel and the specialization (as the flags
// `spindle compile` takes) and says how to warm the cache. The driver query
// itself needs a GPU (tests/python/gpu_test.py captures a torch CUDA graph).
#include <gtest/gtest.h>

#include <string>

#include "../../runtime/src/stream_capture.h"

namespace spindle::rt {
namespace {

Specialization softmaxSpec() {
  Specialization s;
  s.staticDims["N"] = 4096;
  s.typeArgs["T"] = ScalarType::F16;
  s.alignedTensors.insert("x");
  s.checked = true;  // runtime-wide options are not part of the message
  s.lineDirectives = false;
  return s;
}

TEST(StreamCapture, NotCapturingLaunchesWhateverTheCache) {
  EXPECT_EQ(captureRefusal(CaptureStatus::None, false, "softmax", softmaxSpec()), "");
  EXPECT_EQ(captureRefusal(CaptureStatus::None, true, "softmax", softmaxSpec()), "");
}

TEST(StreamCapture, CapturingWithTheBinaryLoadedLaunches) {
  EXPECT_EQ(captureRefusal(CaptureStatus::Active, true, "softmax", softmaxSpec()), "");
}

TEST(StreamCapture, CapturingAMissIsRefusedNamingKernelAndSpecialization) {
  std::string m = captureRefusal(CaptureStatus::Active, false, "softmax", softmaxSpec());
  EXPECT_EQ(m.rfind("softmax: cannot launch during CUDA graph capture", 0), 0u) << m;
  EXPECT_NE(m.find("[--static N=4096 --dtype T=f16 --aligned x]"), std::string::npos) << m;
  EXPECT_NE(m.find("before capturing"), std::string::npos) << m;
  EXPECT_EQ(m.find("--checked"), std::string::npos) << m;
  EXPECT_EQ(m.find("--no-line-directives"), std::string::npos) << m;
  EXPECT_EQ(m.find("invalidated"), std::string::npos) << m;
}

TEST(StreamCapture, AnInvalidatedCaptureIsStillCapturing) {
  std::string m = captureRefusal(CaptureStatus::Invalidated, false, "axpy", Specialization{});
  EXPECT_EQ(m.rfind("axpy: cannot launch during CUDA graph capture", 0), 0u) << m;
  EXPECT_NE(m.find("[no static dims, dtypes or layout facts]"), std::string::npos) << m;
  EXPECT_NE(m.find("already invalidated"), std::string::npos) << m;
  EXPECT_EQ(captureRefusal(CaptureStatus::Invalidated, true, "axpy", Specialization{}), "");
}

}  // namespace
}  // namespace spindle::rt
