#include "frontend/source.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace spindle {

SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') lineStarts_.push_back(i + 1);
  }
}

std::string_view SourceFile::lineText(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size()) return {};
  uint32_t start = lineStarts_[line - 1];
  uint32_t end = line < lineStarts_.size() ? lineStarts_[line] : static_cast<uint32_t>(text_.size());
  std::string_view view(text_.data() + start, end - start);
  while (!view.empty() && (view.back() == '\n' || view.back() == '\r')) view.remove_suffix(1);
  return view;
}

SourceLoc SourceFile::locFor(uint32_t offset) const {
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  uint32_t lineIndex = static_cast<uint32_t>(it - lineStarts_.begin());  // 1-based line
  SourceLoc loc;
  loc.offset = offset;
  loc.line = lineIndex;
  loc.col = offset - lineStarts_[lineIndex - 1] + 1;
  return loc;
}

std::shared_ptr<SourceFile> SourceFile::load(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return nullptr;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return nullptr;
  }
  return std::make_shared<SourceFile>(path, buffer.str());
}

}  // namespace spindle
