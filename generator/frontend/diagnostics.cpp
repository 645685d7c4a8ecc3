#include "frontend/diagnostics.h"

#include <algorithm>
#include <cctype>

namespace spindle {

namespace {
struct DiagInfo {
  const char* name;
  Severity severity;
  const char* format;
};

// Ids are written in the tables as lex_tab_indent; users see lex-tab-indent.
constexpr DiagInfo kDiagTable[] = {
#define DIAG(ID, SEVERITY, FORMAT) {#ID, Severity::SEVERITY, FORMAT},
#include "diag_frontend.def"
#include "diag_sema.def"
#undef DIAG
};

std::string displayName(const char* id) {
  std::string name(id);
  for (char& c : name)
    if (c == '_') c = '-';
  return name;
}

const char* severityText(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// Column in display cells: tabs advance to the next multiple of 8 and UTF-8
// continuation bytes take no cell, so the caret lands under the right glyph.
size_t displayColumn(std::string_view line, size_t byteCol) {
  size_t col = 0;
  for (size_t i = 0; i < byteCol && i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == '\t') col = (col / 8 + 1) * 8;
    else if ((c & 0xC0) != 0x80) ++col;
  }
  return col;
}
}  // namespace

const char* diagName(DiagId id) {
  static std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& info : kDiagTable) v.push_back(displayName(info.name));
    return v;
  }();
  return names[static_cast<size_t>(id)].c_str();
}
Severity diagSeverity(DiagId id) { return kDiagTable[static_cast<size_t>(id)].severity; }
const char* diagFormat(DiagId id) { return kDiagTable[static_cast<size_t>(id)].format; }

namespace {
// Whether `earlier`, already in the list, belongs after `d` in source order.
// Files keep the order they were first reported in, and a diagnostic with no
// location is a barrier: nothing moves across it.
bool belongsAfter(const Diagnostic& earlier, const Diagnostic& d) {
  if (earlier.file != d.file || !earlier.range.begin.valid() || !d.range.begin.valid()) return false;
  const SourceLoc& a = earlier.range.begin;
  const SourceLoc& b = d.range.begin;
  return a.line != b.line ? a.line > b.line : a.col > b.col;
}
}  // namespace

// Stages report in their own order (the parser peeks ahead of the lexer,
// resolution runs before typing): each diagnostic goes to its place in
// source order, after the ones at the same place reported before it.
Diagnostic& DiagnosticEngine::add(Diagnostic d) {
  if (d.severity == Severity::Error) ++errorCount_;
  size_t at = diags_.size();
  while (at > 0 && belongsAfter(diags_[at - 1], d)) --at;
  diags_.insert(diags_.begin() + static_cast<std::ptrdiff_t>(at), std::move(d));
  lastAdded_ = at;
  return diags_[at];
}

bool DiagnosticEngine::hasSame(const Diagnostic& d) const {
  return std::any_of(diags_.begin(), diags_.end(), [&](const Diagnostic& x) {
    return x.id == d.id && x.file == d.file && x.range.begin.offset == d.range.begin.offset &&
           x.range.end.offset == d.range.end.offset && x.message == d.message;
  });
}

bool DiagnosticEngine::hasErrorOnLine(const SourceFile* file, uint32_t line) const {
  for (auto it = diags_.rbegin(); it != diags_.rend(); ++it) {
    if (it->file.get() != file || !it->range.begin.valid()) continue;
    if (it->range.begin.line < line) break;  // sorted: nothing earlier is on the line
    if (it->range.begin.line == line && it->severity == Severity::Error) return true;
  }
  return false;
}

void DiagnosticEngine::clear() {
  diags_.clear();
  errorCount_ = 0;
  lastAdded_ = SIZE_MAX;
}

std::string DiagnosticEngine::render(const Diagnostic& d) const {
  std::string out;
  const std::string path = d.file ? d.file->path() : std::string("<input>");
  std::string idSuffix = d.id == DiagId::Count ? "" : fmt::format(" [{}]", diagName(d.id));
  if (d.range.begin.valid()) {
    out += fmt::format("{}:{}:{}: {}: {}{}\n", path, d.range.begin.line, d.range.begin.col, severityText(d.severity),
                       d.message, idSuffix);
    if (d.file) {
      std::string_view line = d.file->lineText(d.range.begin.line);
      out += fmt::format("{}\n", line);
      size_t start = displayColumn(line, d.range.begin.col - 1);
      size_t stop = start + 1;
      if (d.range.end.line == d.range.begin.line && d.range.end.col > d.range.begin.col)
        stop = std::max(stop, displayColumn(line, d.range.end.col - 1));
      out += std::string(start, ' ') + "^" + std::string(stop - start - 1, '~') + "\n";
    }
  } else {
    out += fmt::format("{}: {}: {}{}\n", path, severityText(d.severity), d.message, idSuffix);
  }
  for (const auto& n : d.notes) out += render(n);
  return out;
}

std::string DiagnosticEngine::renderAll() const {
  std::string out;
  for (const auto& d : diags_) out += render(d);
  return out;
}

// ---------------------------------------------------------------------------
// Hints for CUDA and C spellings

namespace {
struct Spelling {
  std::string_view foreign;
  std::string_view spindle;
};

constexpr Spelling kTypes[] = {
    {"float", "f32"},     {"double", "f64"},
    {"half", "f16"},      {"__half", "f16"},
    {"int", "i32"},       {"unsigned", "u32"},
    {"uint", "u32"},      {"long", "i64"},
    {"short", "i16"},     {"char", "i8"},
    {"int8_t", "i8"},     {"int16_t", "i16"},
    {"int32_t", "i32"},   {"int64_t", "i64"},
    {"uint8_t", "u8"},    {"uint16_t", "u16"},
    {"uint32_t", "u32"},  {"uint64_t", "u64"},
    {"size_t", "u64"},    {"float16", "f16"},
    {"float32", "f32"},   {"float64", "f64"},
    {"bfloat16", "bf16"}, {"__nv_bfloat16", "bf16"},
    {"int8", "i8"},       {"int16", "i16"},
    {"int32", "i32"},     {"int64", "i64"},
    {"uint8", "u8"},      {"uint16", "u16"},
    {"uint32", "u32"},    {"uint64", "u64"},
    {"boolean", "bool"},  {"__hip_bfloat16", "bf16"},
};

constexpr Spelling kGeometry[] = {
    {"threadIdx", "thread_id"},
    {"blockIdx", "block_id"},
    {"blockDim", "block_dim"},
    {"gridDim", "grid_dim"},
};

// What to write instead, quoted, to follow "in Spindle, write ".
constexpr Spelling kCalls[] = {
    {"__syncthreads", "'sync()'"},
    {"syncthreads", "'sync()'"},
    {"__shfl_xor_sync", "'shfl_xor(v, lane_mask)'"},
    {"__shfl_xor", "'shfl_xor(v, lane_mask)'"},
    {"__shfl_down_sync", "a warp collective, 'warp_sum(v)' (or warp_max, warp_min), or 'shfl_xor(v, lane_mask)'"},
    {"__shfl_up_sync", "'warp_cumsum(v)' or 'shfl_xor(v, lane_mask)'"},
    {"__shfl_sync", "a warp collective, 'warp_sum(v)' (or warp_max, warp_min), or 'shfl_xor(v, lane_mask)'"},
    {"__popc", "'popcount(x)'"},
    {"__popcll", "'popcount(x)'"},
    {"__expf", "'exp(x)'"},
    {"__logf", "'log(x)'"},
    {"__sinf", "'sin(x)'"},
    {"__cosf", "'cos(x)'"},
    {"__powf", "'pow(x, y)'"},
    {"__fdividef", "'x / y'"},
    {"__ldg", "the element itself, 'x[i]'"},
    {"__fmaf_rn", "'fma(x, y, z)'"},
    {"__fsqrt_rn", "'sqrt(x)'"},
    {"__frsqrt_rn", "'rsqrt(x)'"},
    {"__global__", "'kernel name(...):'"},
    {"__device__", "'def name(...) -> TYPE:'"},
    {"__shared__", "'name = shared(T, [sizes])'"},
    {"__launch_bounds__", "'@block(...)'"},
    {"__half", "'f16'"},
    {"__nv_bfloat16", "'bf16'"},
    {"__hip_bfloat16", "'bf16'"},
    {"expf", "'exp(x)'"},
    {"exp2f", "'exp2(x)'"},
    {"logf", "'log(x)'"},
    {"log2f", "'log2(x)'"},
    {"sqrtf", "'sqrt(x)'"},
    {"rsqrtf", "'rsqrt(x)'"},
    {"sinf", "'sin(x)'"},
    {"cosf", "'cos(x)'"},
    {"tanhf", "'tanh(x)'"},
    {"erff", "'erf(x)'"},
    {"floorf", "'floor(x)'"},
    {"ceilf", "'ceil(x)'"},
    {"powf", "'pow(x, y)'"},
    {"fmaf", "'fma(x, y, z)'"},
    {"fabs", "'abs(x)'"},
    {"fabsf", "'abs(x)'"},
    {"fmin", "'min(a, b)'"},
    {"fminf", "'min(a, b)'"},
    {"fmax", "'max(a, b)'"},
    {"fmaxf", "'max(a, b)'"},
    {"atomicAdd", "'atomic_add(x[i], v)'"},
    {"atomicMax", "'atomic_max(x[i], v)'"},
    {"atomicMin", "'atomic_min(x[i], v)'"},
    {"atomicExch", "'atomic_exch(x[i], v)'"},
    {"atomicCAS", "'atomic_cas(x[i], expected, new)'"},
    {"atomicAnd", "'atomic_and(x[i], v)'"},
    {"atomicOr", "'atomic_or(x[i], v)'"},
    {"atomicXor", "'atomic_xor(x[i], v)'"},
    {"warpSize", "'warp_size()'"},
};

template <size_t N>
std::string_view find(const Spelling (&table)[N], std::string_view name) {
  for (const auto& s : table)
    if (s.foreign == name) return s.spindle;
  return {};
}

// Edit distance, ignoring ASCII case: insertions, deletions, substitutions
// and swaps of two neighbours (`f23` is one edit from `f32`).
size_t editDistance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}
}  // namespace

std::string_view spindleTypeFor(std::string_view name) { return find(kTypes, name); }
std::string_view spindleGeometryFor(std::string_view name) { return find(kGeometry, name); }
std::string_view spindleCallFor(std::string_view name) { return find(kCalls, name); }

std::string_view closestSpelling(std::string_view name, const std::vector<std::string_view>& candidates) {
  // One edit in a short name, two in a longer one, and never more than a
  // third of the name: `ex` is not a misspelling of `max`.
  size_t limit = std::min<size_t>(name.size() <= 4 ? 1 : 2, std::max<size_t>(name.size() / 3, 1));
  std::string_view best;
  size_t bestDistance = limit + 1;
  for (std::string_view c : candidates) {
    if (c == name || std::max(c.size(), name.size()) - std::min(c.size(), name.size()) > limit) continue;
    size_t d = editDistance(name, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

}  // namespace spindle
