#include "history/git.h"

#include <fmt/core.h>

#include <sstream>

#include "base/subprocess.h"

namespace hotline::history {
namespace {

// git's output without its last newline; none when git failed.
std::optional<std::string> Git(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  std::string out;
  if (base::Capture(args, dir, &out) != 0) return std::nullopt;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

std::optional<GitState> GitStateOf(const std::string& folder) {
  std::optional<std::string> top = Git(folder, {"rev-parse", "--show-toplevel"});
  if (!top || top->empty()) return std::nullopt;
  std::optional<std::string> head = Git(*top, {"rev-parse", "--verify", "-q", "HEAD"});
  if (!head || head->empty()) return std::nullopt;  // a repository with no commit yet
  GitState state;
  state.top = *top;
  state.commit = *head;
  state.branch = Git(*top, {"symbolic-ref", "--short", "-q", "HEAD"}).value_or("");
  std::optional<std::string> changes = Git(*top, {"status", "--porcelain", "--untracked-files=no"});
  state.dirty = changes && !changes->empty();
  return state;
}

Expected<std::string> ResolveCommit(const std::string& top, const std::string& revision) {
  std::optional<std::string> hash =
      Git(top, {"rev-parse", "--verify", "-q", "--end-of-options", revision + "^{commit}"});
  if (!hash || hash->empty())
    return Status::Error(fmt::format("no commit '{}' in the repository at {}", revision, top));
  return *hash;
}

Expected<std::vector<std::string>> Ancestry(const std::string& top, const std::string& commit) {
  std::optional<std::string> list = Git(top, {"rev-list", "--topo-order", commit});
  if (!list) return Status::Error(fmt::format("git rev-list {} failed in {}", commit, top));
  std::vector<std::string> commits;
  std::istringstream in(*list);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) commits.push_back(line);
  return commits;
}

std::string Subject(const std::string& top, const std::string& commit) {
  return Git(top, {"log", "-1", "--format=%s", commit}).value_or("");
}

}  // namespace hotline::history
