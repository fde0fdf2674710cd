// The profiling pdfTeX and its formats (tex_engine.h).
#include "record/tex_engine.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/subprocess.h"
#include "record/launch.h"

namespace hotline::record {

namespace {

namespace fs = std::filesystem;

const TexFormatSpec kFormats[] = {
    {"pdflatex",
     "pdflatex.ini",
     "texlive-latex-base",
     {"-ini", "-etex", "-jobname=pdflatex", "-progname=pdflatex", "*pdflatex.ini"}},
    {"pdftex",
     "pdfetex.ini",
     "texlive-base",
     {"-ini", "-etex", "-jobname=pdftex", "-progname=pdftex", "*pdfetex.ini"}},
    {"tex",
     "plain.tex",
     "texlive-base",
     {"-ini", "-jobname=tex", "-progname=tex", "plain", "\\dump"}},
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last non-empty line of a log, for one-line errors.
std::string LastLine(const std::string& path) {
  std::istringstream in(ReadAll(path));
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// Runs argv with stdin from /dev/null and stdout+stderr into `log` (or inherited when empty),
// in `dir`, with `env` added. Returns the shell's exit status.
int Run(const std::vector<std::string>& argv, const std::string& dir, const std::string& log,
        const std::map<std::string, std::string>& env, bool quiet_stdin) {
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(127);
    if (quiet_stdin) {
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
    }
    if (!log.empty()) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) _exit(127);
      dup2(fd, 1);
      dup2(fd, 2);
    }
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(argv[0].c_str(), args.data());
    fmt::print(stderr, "hotline tex: cannot run {}: {}\n", argv[0], strerror(errno));
    _exit(127);
  }
  return WaitForProgram(child);
}

// One engine build or format build at a time (tests run in parallel).
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    fd_ = open((dir + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0)
      while (flock(fd_, LOCK_EX) < 0 && errno == EINTR) {
      }
  }
  ~DirLock() {
    if (fd_ >= 0) close(fd_);
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

const TexFormatSpec* FindTexFormat(const std::string& command) {
  std::string name = fs::path(command).filename();
  if (name == "pdfetex") name = "pdftex";
  for (const TexFormatSpec& f : kFormats)
    if (f.name == name) return &f;
  return nullptr;
}

std::string KnownTexCommands() { return "pdflatex, pdftex (or pdfetex) or tex"; }

Expected<TexEngine> EnsureTexEngine() {
  const std::string dir = HOTLINE_TEX_ENGINE_DIR;
  const std::string hooks = HOTLINE_TEX_HOOKS_FILE;
  const std::string script = HOTLINE_TEX_SCRIPT;
  std::error_code ec;
  if (!fs::exists(hooks, ec) || !fs::exists(script, ec))
    return Status::Error(
        "the profiling pdfTeX is built from hotline's build folder, which is gone (" + hooks +
        "): build hotline from source and run it from there");
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("cannot create " + dir + ": " + ec.message());
  TexEngine engine;
  engine.binary = dir + "/bin/pdftex";
  engine.formats_dir = dir + "/formats";
  {
    DirLock lock(dir);
    // The script prints its own one-line reason when it fails.
    int rc = Run({"/bin/bash", script, dir, hooks}, "", "", {}, false);
    if (rc != 0) return Status::Error("the profiling pdfTeX could not be built (see above)");
  }
  engine.key = ReadAll(engine.binary + ".key");
  if (access(engine.binary.c_str(), X_OK) != 0)
    return Status::Error(engine.binary + " is missing after its build");
  return engine;
}

Expected<std::string> EnsureTexFormat(const TexEngine& engine, const TexFormatSpec& spec) {
  std::error_code ec;
  fs::create_directories(engine.formats_dir, ec);
  if (ec) return Status::Error("cannot create " + engine.formats_dir + ": " + ec.message());
  std::string fmt_path = engine.formats_dir + "/" + spec.name + ".fmt";
  std::string key_path = fmt_path + ".key";
  DirLock lock(engine.formats_dir);
  if (fs::exists(fmt_path, ec) && ReadAll(key_path) == engine.key) return fmt_path;

  std::string found;
  if (base::Capture({"kpsewhich", "-progname=" + spec.name, spec.ini_file}, ".", &found) != 0 ||
      found.empty())
    return Status::Error("cannot make the " + spec.name + " format: " + spec.ini_file +
                         " is not installed (install " + spec.package + ")");
  fmt::print(stderr, "hotline tex: making the {} format for the profiling engine (once)\n",
             spec.name);
  std::vector<std::string> argv = {engine.binary, "-interaction=nonstopmode"};
  argv.insert(argv.end(), spec.ini_args.begin(), spec.ini_args.end());
  std::string log = engine.formats_dir + "/" + spec.name + ".build.log";
  // Profiled, so that the macros' definition sites are written beside the format (and the
  // format build's own profile is there to look at).
  int rc =
      Run(argv, engine.formats_dir, log,
          {{"HOTLINE_TEX_OUTPUT", engine.formats_dir + "/" + spec.name + "-ini.hotline"}}, true);
  if (rc != 0 || !fs::exists(fmt_path, ec))
    return Status::Error("making the " + spec.name + " format failed (" + log +
                         "): " + LastLine(log));
  std::ofstream(key_path, std::ios::binary) << engine.key;
  return fmt_path;
}

int RunTexEngine(const TexEngine& engine, const TexFormatSpec& spec, const std::string& format,
                 const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {engine.binary, "-fmt=" + format, "-progname=" + spec.name};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, "", "", env, false);
}

}  // namespace hotline::record
