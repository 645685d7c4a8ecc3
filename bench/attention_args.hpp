// The launch arguments of samples/attention.spn and samples/attention_dot.spn
// in each kernel's own form, for bench/attention_check and the cpu sample
// tests (one list, so the two cannot drift apart).
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>
#include <vector>

namespace bench {

struct AttentionLaunch {
  int64_t B, HQ, HKV, S, D;
  bool causal;
  double scale;
};

// perHead (attention_dot): Q and O are [B * HQ, S, D], K and V [B * HKV, S,
// D], L [B * HQ, S], S a dim. Otherwise (attention): rows, Q and O [B * HQ *
// S, D], K and V [B * HKV * S, D], L [B * HQ * S], and S a scalar after L.
// Then causal (an i32) and the scale (an f32).
inline std::vector<spindle::Arg> attentionArgs(bool perHead, const AttentionLaunch& a, spindle::ScalarType t,
                                               const void* Q, const void* K, const void* V, const void* O,
                                               const void* L) {
  const int64_t qh = a.B * a.HQ, kh = a.B * a.HKV;
  const std::vector<int64_t> qShape =
      perHead ? std::vector<int64_t>{qh, a.S, a.D} : std::vector<int64_t>{qh * a.S, a.D};
  const std::vector<int64_t> kShape =
      perHead ? std::vector<int64_t>{kh, a.S, a.D} : std::vector<int64_t>{kh * a.S, a.D};
  const std::vector<int64_t> lShape = perHead ? std::vector<int64_t>{qh, a.S} : std::vector<int64_t>{qh * a.S};
  auto shaped = [](const void* p, spindle::ScalarType type, const std::vector<int64_t>& shape) {
    return spindle::tensor(p, type, shape.data(), int(shape.size()));
  };
  std::vector<spindle::Arg> args = {shaped(Q, t, qShape), shaped(K, t, kShape), shaped(V, t, kShape),
                                    shaped(O, t, qShape), shaped(L, spindle::ScalarType::F32, lShape)};
  if (!perHead) args.push_back(spindle::scalar(int32_t(a.S)));
  args.push_back(spindle::scalar(int32_t(a.causal ? 1 : 0)));
  args.push_back(spindle::scalar(float(a.scale)));
  return args;
}

}  // namespace bench
