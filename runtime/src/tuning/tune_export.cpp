#include "tuning/tune_export.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include <spindle/runtime.hpp>

#include "tuning/tuned_kernel.h"

namespace spindle::rt {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += {'\\', c};
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += c;
  }
  return out + "\"";
}

// Just enough JSON for the export format: objects, arrays, strings and
// integers, with the string escapes quoted() writes.
class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}
  void expect(char c) {
    skip();
    if (pos_ >= s_.size() || s_[pos_] != c) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  bool accept(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      if (e == 'n') out += '\n';
      else if (e == 't') out += '\t';
      else if (e == 'u' && pos_ + 4 <= s_.size()) {
        out += char(std::stoi(s_.substr(pos_, 4), nullptr, 16));
        pos_ += 4;
      } else out += e;
    }
    expect('"');
    return out;
  }
  long integer() {
    skip();
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(s_.substr(pos_, 20), &used);
    } catch (const std::exception&) {
      fail("expected a number");
    }
    pos_ += used;
    return v;
  }
  bool atEnd() {
    skip();
    return pos_ == s_.size();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("not a Spindle tuning file: {} at byte {}", what, pos_));
  }

 private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

std::string exportTuningJson(TuningStore& store, size_t* entries) {
  std::string out = "{\"spindle_tuning\": 1, \"entries\": [";
  size_t n = 0;
  for (const std::string& key : store.keys()) {
    auto blob = store.get(key);
    if (!blob) continue;
    out += fmt::format("{}\n  {{\"key\": \"{}\", \"record\": {}}}", n ? "," : "", key,
                       quoted(std::string(blob->begin(), blob->end())));
    ++n;
  }
  out += "\n]}\n";
  if (entries) *entries = n;
  return out;
}

size_t importTuningJson(TuningStore& store, const std::string& text) {
  Reader in(text);
  std::vector<std::pair<std::string, std::string>> entries;
  in.expect('{');
  bool sawVersion = false;
  do {
    std::string field = in.string();
    in.expect(':');
    if (field == "spindle_tuning") {
      if (in.integer() != 1) in.fail("an unknown version");
      sawVersion = true;
    } else if (field == "entries") {
      in.expect('[');
      if (!in.accept(']')) {
        do {
          in.expect('{');
          std::string key, record;
          do {
            std::string name = in.string();
            in.expect(':');
            std::string value = in.string();
            if (name == "key") key = value;
            else if (name == "record") record = value;
          } while (in.accept(','));
          in.expect('}');
          std::string chosen, list;
          if (!isTuningKey(key)) in.fail("an entry whose key is not 64 hex digits");
          if (!parseTuneRecord(record, chosen, list)) in.fail("an entry whose record is not a tuning record");
          entries.emplace_back(std::move(key), std::move(record));
        } while (in.accept(','));
        in.expect(']');
      }
    } else {
      in.fail("an unknown field '" + field + "'");
    }
  } while (in.accept(','));
  in.expect('}');
  if (!in.atEnd() || !sawVersion) in.fail(sawVersion ? "trailing text" : "no \"spindle_tuning\" version");
  if (!store.enabled()) throw Error("spindle: cannot import tuning results: the disk cache is off");
  size_t stored = 0;
  for (const auto& [key, record] : entries)
    stored += store.put(key, std::vector<char>(record.begin(), record.end())) ? 1 : 0;
  return stored;
}

}  // namespace spindle::rt
