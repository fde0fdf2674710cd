// What the history needs from git: which commit a run was built from, and the order of commits.
// Each call runs the `git` on PATH in a folder of the repository.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::history {

struct GitState {
  std::string top;     // the repository's top folder
  std::string commit;  // HEAD's full hash
  std::string branch;  // empty when HEAD is detached (as under `git bisect`)
  bool dirty = false;  // tracked files with changes not committed
};

// The repository holding `folder`, and its HEAD; none when `folder` is in none (or git is
// missing).
std::optional<GitState> GitStateOf(const std::string& folder);

// `revision` (a hash, a branch, HEAD~2, ...) as a commit's full hash in the repository at `top`;
// fails, naming it, when it names no commit there.
Expected<std::string> ResolveCommit(const std::string& top, const std::string& revision);

// `commit` and its ancestors, nearest first (git rev-list --topo-order).
Expected<std::vector<std::string>> Ancestry(const std::string& top, const std::string& commit);

// The first line of the commit's message; empty when unknown.
std::string Subject(const std::string& top, const std::string& commit);

}  // namespace hotline::history
