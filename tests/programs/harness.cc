#include "harness.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "../symbol_cache_off.h"

namespace hotline::testing {

RunResult Execute(const std::vector<std::string>& argv, const std::string& dir) {
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(pipe(out_pipe), 0);
  EXPECT_EQ(pipe(err_pipe), 0);
  pid_t child = fork();
  if (child == 0) {
    if (chdir(dir.c_str()) != 0) _exit(121);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    // Only 1 and 2 may hold the pipes: a daemon the program leaves behind (pg_ctl's server)
    // keeps its other descriptors, and the pipes open there would never reach their end.
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(122);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult run;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? run.out : run.err).append(buf, size_t(n));
      }
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  run.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return run;
}

namespace {

// The scratch folders this test process made: removed when it exits if every test passed (a
// failed one's are kept to look at). ctest runs each test in a process of its own, so folders
// left behind would pile up by the thousand.
struct ScratchFolders {
  std::vector<std::string> made;
  ~ScratchFolders() {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    std::error_code ec;
    for (const std::string& dir : made) std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

std::string ScratchDir(const std::string& name) {
  static ScratchFolders folders;
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp ? tmp : "/tmp") + "/hotline-record-" + name + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  EXPECT_NE(mkdtemp(buf.data()), nullptr);
  folders.made.emplace_back(buf.data());
  return buf.data();
}

std::vector<std::string> ProfilesIn(const std::string& dir) {
  std::vector<std::string> found;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d ? readdir(d) : nullptr) {
    std::string name = e->d_name;
    if (name.size() > 8 && name.substr(name.size() - 8) == ".hotline")
      found.push_back(dir + "/" + name);
  }
  if (d) closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}

format::RawProfile Load(const std::string& path) {
  format::ReadStats stats;
  Expected<format::RawProfile> profile = format::LoadRawProfile(path, &stats);
  EXPECT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_FALSE(stats.damaged()) << path << ": " << stats.summary();
  return profile.ok() ? std::move(*profile) : format::RawProfile{};
}

size_t ProgramThreads(const format::RawProfile& profile) {
  size_t n = 0;
  for (const format::RawThread& t : profile.threads)
    n += (t.flags & format::kThreadRuntime) ? 0 : 1;
  return n;
}

RunResult Hotline(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> argv = {HOTLINE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return Execute(argv, dir);
}

Recorded RecordAndCompare(const std::string& name, const std::vector<std::string>& argv,
                          const std::vector<std::string>& record_options) {
  Recorded r;
  r.plain_dir = ScratchDir(name + "-plain");
  r.plain = Execute(argv, r.plain_dir);
  r.dir = ScratchDir(name);
  r.profile = r.dir + "/p.hotline";
  std::vector<std::string> command = {HOTLINE_BIN, "record", "-q", "-o", r.profile};
  command.insert(command.end(), record_options.begin(), record_options.end());
  command.push_back("--");
  command.insert(command.end(), argv.begin(), argv.end());
  r.profiled = Execute(command, r.dir);
  EXPECT_EQ(r.profiled.out, r.plain.out);
  EXPECT_EQ(r.profiled.err, r.plain.err);
  EXPECT_EQ(r.profiled.exit_code, r.plain.exit_code);
  return r;
}

bool Installed(const std::string& program) {
  return system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace hotline::testing
