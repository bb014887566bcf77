#include "budget/error.hpp"

namespace budget {
namespace {
std::string compose(const std::string& message, const std::string& source, const std::string& path) {
  std::string out;
  if (!source.empty()) out += source + ": ";
  if (!path.empty()) out += path + ": ";
  out += message;
  return out;
}
}  // namespace

Error::Error(std::string message, std::string source, std::string path)
    : std::runtime_error(compose(message, source, path)),
      message_(std::move(message)),
      source_(std::move(source)),
      path_(std::move(path)),
      text_(compose(message_, source_, path_)) {}

Error Error::with_source(const std::string& source) const {
  if (!source_.empty()) return *this;
  return Error(message_, source, path_);
}

}  // namespace budget
