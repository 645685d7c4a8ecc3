// cache_hints.spn: every cache-hinted load and store (load_stream,
// load_readonly, load_keep, store_stream) on elements of 1, 2, 4 and 8
// bytes. The hints change how the GPU caches, never what a load returns or
// a store writes: each output is the plain kernel's value, computed here
// exactly (f32 and f64 sums in the kernel's order, f16 rounded once).
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class CacheHints : public GoldenTest {};

TEST_F(CacheHints, HintedLoadsAndStoresKeepTheirValues) {
  atBothWidths([&] {
    Kernel k = kernel("cache_hints.spn", "hints");
    for (int64_t N : {300, 1}) {
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<float> a = random<float>(size_t(N), -4, 4);
      std::vector<F16> h = random<F16>(size_t(N), -4, 4);
      std::vector<int8_t> q(static_cast<size_t>(N));
      for (int8_t& x : q) x = int8_t(integer(-128, 127));
      std::vector<BF16> b = random<BF16>(size_t(N), -4, 4);
      std::vector<double> d = random<double>(size_t(N), -4, 4);
      auto da = upload(a);
      auto dh = upload(h);
      auto dq = upload(q);
      auto db = upload(b);
      auto dd = upload(d);
      auto y = poisoned<float>(size_t(N));
      auto z = poisoned<F16>(size_t(N));
      auto w = poisoned<int8_t>(size_t(N));
      auto u = poisoned<float>(size_t(N));
      auto v = poisoned<double>(size_t(N));
      k.launch(nullptr, {da.arg({N}), dh.arg({N}), dq.arg({N}), db.arg({N}), dd.arg({N}), y.arg({N}), z.arg({N}),
                         w.arg({N}), u.arg({N}), v.arg({N})});
      auto gy = y.read();
      auto gz = z.read();
      auto gw = w.read();
      auto gu = u.read();
      auto gv = v.read();
      Check check("y, z, w, u, v");
      for (int64_t i = 0; i < N; ++i) {
        const size_t s = size_t(i), j = size_t(N - 1 - i), n = size_t((i + 1) % N);
        check.exact(at(i, 0), gy[s], f32(double(f32(double(a[s]) + a[j])) + a[n]));
        check.exact(at(i, 1), value(gz[s]), value(from<F16>(f32(value(h[s]) + value(h[j])))));
        check.exact(at(i, 2), gw[s], q[s]);
        check.exact(at(i, 3), gu[s], f32(double(q[j]) + value(b[s])));
        check.exact(at(i, 4), gv[s], (d[s] + d[j]) + d[n]);
      }
    }
  });
}

}  // namespace
}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
