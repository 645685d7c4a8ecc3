// Unannotated ("weak") consts behave exactly like their literals: at each
// use they take the type typing gave that use. Tested by value, not by
// text: the generated expressions are compiled into constexpr host
// functions whose results the host C++ compiler checks with static_assert.
// (Printed through a narrower constexpr, i64(K) * K was 0 and x * C with x
// an f64 was 0.10000000149011612.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "frontend/diagnostics.h"
#include "spindle/generator.h"

namespace fs = std::filesystem;

namespace {

// Compiles `text` with the host C++ compiler (CXX, else c++), syntax only:
// empty when it is accepted, else the exit status and the compiler's log.
std::string hostCompilerRejects(const std::string& stem, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / (stem + "-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "check.cpp";
  std::ofstream(file) << text;
  const char* cxx = std::getenv("CXX");
  std::string command = std::string(cxx && *cxx ? cxx : "c++") + " -std=c++17 -fsyntax-only '" + file.string() +
                        "' > '" + (dir / "log").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log(dir / "log");
  std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  return status == 0 ? std::string() : "exit status " + std::to_string(status) + "\n" + output;
}

const char* kModule = R"(const K = 65536
const C = 0.1
const BLOCK = 65536
const NEG = -3
const HALF = 1 / 2.0

@grid(1)
@block(1)
kernel weak(out: i64[4], fout: f64[2], n: i32, x: f64, s: i64):
    a = i64(K) * K
    b = x * C
    c = i64(BLOCK) * n
    d = u64(K) * K + NEG
    e = HALF * x
    g = 1 << s
    out[0] = a
    out[1] = c
    out[2] = i64(d)
    out[3] = g
    fout[0] = b
    fout[1] = e
)";

// The right-hand side of the generated declaration `TYPE NAME = ...;`.
std::string initializerOf(const std::string& source, const std::string& decl) {
  size_t at = source.find(decl + " = ");
  if (at == std::string::npos) return "";
  at += decl.size() + 3;
  return source.substr(at, source.find(";\n", at) - at);
}

TEST(WeakConsts, ComputeInTheTypeOfTheirUse) {
  spindle::DiagnosticEngine diags;
  auto module = spindle::CompiledModule::fromString("weak.spn", kModule, diags);
  ASSERT_TRUE(module) << diags.renderAll();
  std::string source = module->generate("weak", {}).source;

  std::string a = initializerOf(source, "int64_t a"), b = initializerOf(source, "double b"),
              c = initializerOf(source, "int64_t c"), d = initializerOf(source, "uint64_t d"),
              e = initializerOf(source, "double e"), g = initializerOf(source, "int64_t g");
  for (const auto* expr : {&a, &b, &c, &d, &e, &g}) ASSERT_FALSE(expr->empty()) << source;

  // The file-scope constexpr declarations come along: a use printed through
  // one must compute the same value.
  std::string declarations;
  for (size_t at = source.find("\nconstexpr "); at != std::string::npos; at = source.find("\nconstexpr ", at + 1))
    declarations += source.substr(at + 1, source.find('\n', at + 1) - at);
  std::ostringstream check;
  check << "#include <cstdint>\n"
        << declarations << "constexpr int64_t a() { return " << a << "; }\n"
        << "constexpr double b(double x) { return " << b << "; }\n"
        << "constexpr int64_t c(int32_t n) { return " << c << "; }\n"
        << "constexpr uint64_t d() { return " << d << "; }\n"
        << "constexpr double e(double x) { return " << e << "; }\n"
        << "constexpr int64_t g(int64_t s) { return " << g << "; }\n"
        << "static_assert(a() == (int64_t(1) << 32), \"i64(K) * K is 2^32\");\n"
        << "static_assert(b(1.0) == 0.1, \"x * C with x: f64 is the double 0.1\");\n"
        << "static_assert(c(65536) == (int64_t(1) << 32), \"i64(BLOCK) * n is 64-bit\");\n"
        << "static_assert(d() == (uint64_t(1) << 32) - 3, \"u64(K) * K + NEG\");\n"
        << "static_assert(e(3.0) == 1.5, \"HALF is 0.5 in double\");\n"
        << "static_assert(g(40) == (int64_t(1) << 40), \"1 << s shifts an i64\");\n";
  EXPECT_EQ(hostCompilerRejects("spindle-weak-consts", check.str()), "")
      << "the host compiler rejected the generated expressions:"
      << "\na = " << a << "\nb = " << b << "\nc = " << c << "\nd = " << d << "\ne = " << e << "\ng = " << g;
}

// Negative literals keep their type too (found by the cpu fuzzer, seeds
// 200002 and 200062, with its kernels compiled by clang under
// -fsanitize=undefined): the cast of `i64(-296) >> s` was dropped, so the int
// -296 was shifted by 36; and -2147483648, whose digits no int holds, was
// printed as a long long, which made an i32 sum 64-bit (and a narrowing in
// the braces of a tuple, which clang refuses).
TEST(WeakConsts, NegativeLiteralsKeepTheirType) {
  spindle::DiagnosticEngine diags;
  auto module = spindle::CompiledModule::fromString("negative.spn", R"(@grid(1)
@block(1)
kernel negative(out: i64[2], s: i64, n: i32):
    a = i64(-296) >> s
    b = n + -2147483648
    c = s + -9223372036854775808
    out[0] = a + c
    out[1] = i64(b)
)",
                                                    diags);
  ASSERT_TRUE(module) << diags.renderAll();
  std::string source = module->generate("negative", {}).source;
  std::string a = initializerOf(source, "int64_t a"), b = initializerOf(source, "int32_t b"),
              c = initializerOf(source, "int64_t c");
  for (const auto* expr : {&a, &b, &c}) ASSERT_FALSE(expr->empty()) << source;
  std::ostringstream check;
  check << "#include <cstdint>\n#include <type_traits>\n"
        << "constexpr int64_t a(int64_t s) { return " << a << "; }\n"
        << "constexpr int32_t n = 5;\n"
        << "constexpr int64_t s = 5;\n"
        << "static_assert(a(36) == -1, \"i64(-296) >> 36 shifts an i64\");\n"
        << "static_assert(std::is_same_v<decltype(" << b << "), int32_t>, \"an i32 sum\");\n"
        << "static_assert(" << b << " == -2147483643, \"5 + -2147483648\");\n"
        << "static_assert(sizeof(" << c << ") == 8, \"an i64 sum\");\n"
        << "static_assert(" << c << " == INT64_MIN + 5, \"5 + -9223372036854775808\");\n";
  EXPECT_EQ(hostCompilerRejects("spindle-negative-literals", check.str()), "")
      << "the host compiler rejected the generated expressions:"
      << "\na = " << a << "\nb = " << b << "\nc = " << c;
}

}  // namespace
