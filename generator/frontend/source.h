// Source files and locations. Every token and AST node keeps a SourceRange so
// every diagnostic can point at the text it is about (chibicc's habit).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spindle {

struct SourceLoc {
  uint32_t offset = 0;  // byte offset into the file
  uint32_t line = 0;    // 1-based; 0 means "no location"
  uint32_t col = 0;     // 1-based, in bytes
  bool valid() const { return line != 0; }
};

struct SourceRange {
  SourceLoc begin;
  SourceLoc end;  // one past the last byte
  static SourceRange at(SourceLoc l) { return {l, l}; }
  static SourceRange span(const SourceRange& a, const SourceRange& b) { return {a.begin, b.end}; }
};

// A loaded .spn file. Immutable once made; shared by the lexer, diagnostics
// and every stage after them.
class SourceFile {
 public:
  SourceFile(std::string path, std::string text);

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  // Text of the given 1-based line, without its newline.
  std::string_view lineText(uint32_t line) const;
  uint32_t lineCount() const { return static_cast<uint32_t>(lineStarts_.size()); }
  SourceLoc locFor(uint32_t offset) const;

  // Reads a file; returns nullptr and fills `error` when it cannot.
  static std::shared_ptr<SourceFile> load(const std::string& path, std::string& error);

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> lineStarts_;
};

}  // namespace spindle
