// The program never notices, on programs nobody here wrote: Debian's coreutils, xz, bzip2, gzip,
// bash scripts with pipelines, subshells, traps and background jobs, python3 with threads,
// multiprocessing, subprocess and signal handlers, make -j2, gcc, git, a static busybox, a
// static Go binary and perl, each run plain and under every recording mode. Standard output,
// standard error and the exit status must be the plain run's, and so must what the programs
// print of their own signals (/proc/self/status's Sig lines, Python's signal.getsignal, bash's
// trap), descriptors (/proc/self/fd) and environment (env, os.environ). The profile each run
// leaves must be readable and whole. Timing decides nothing here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <regex>
#include <string>
#include <vector>

#include "format/raw_profile.h"
#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::ProfilesIn;
using testing::RunResult;
using testing::ScratchDir;

struct Command {
  const char* name;
  std::vector<std::string> argv;
  bool is_static = false;  // no preloaded runtime can reach it: refused where the runtime is
  // The program hotline starts prints what the kernel shows of itself (its caught signals,
  // every descriptor), which includes the runtime's where the runtime is.
  bool own_kernel_view = false;
};

// The corpus. Commands print only what does not change from run to run.
std::vector<Command> Commands() {
  auto sh = [](const char* name, const std::string& script) {
    return Command{name, {"/bin/bash", "-c", script}};
  };
  auto py = [](const char* name, const std::string& script) {
    return Command{name, {"/usr/bin/python3", "-c", script}};
  };
  std::vector<Command> c = {
      // coreutils, each on generated input
      sh("sort-parallel",
         "seq 300000 | sort -R --random-source=<(yes) | sort -n --parallel=2 -S 4M | sha256sum"),
      sh("sort-unique", "seq 50000 | sed 's/$/ x/' | sort -u -k1,1 | tail -3"),
      sh("wc-tr-cut", "seq 100000 | tr 0-9 a-j | cut -c1-3 | sort | uniq -c | sort -rn | head"),
      sh("split-join", "seq 1000 > a; split -l 100 a part.; cat part.* | cmp - a && ls part.* | wc -l"),
      sh("comm-join", "seq 1 2 100 > odd; seq 1 3 100 > three; comm -12 odd three | wc -l; "
                      "join <(sort odd) <(sort three) | wc -l"),
      sh("od-base64", "head -c 4096 /dev/zero | base64 | od -c | tail -2"),
      sh("dd-stat", "dd if=/dev/zero of=z bs=1k count=300 2>/dev/null; stat -c %s z; du -sb z"),
      sh("find-xargs", "mkdir -p d/e/f; touch d/1 d/e/2 d/e/f/3; find d -type f | sort | "
                       "xargs -P2 -n1 basename | sort"),
      sh("tar-roundtrip", "mkdir -p t; seq 2000 > t/x; tar cf t.tar t; rm -r t; tar xf t.tar; "
                          "tar tf t.tar; wc -l < t/x"),
      sh("date-numfmt", "date -u -d @1000000000 +%F; numfmt --to=iec 123456789"),
      // compressors, threads among them
      sh("xz-threads", "seq 400000 | xz -T2 -c | xz -d | sha256sum"),
      sh("xz-levels", "seq 100000 | xz -9e -c > s.xz; xz -l s.xz | tail -1 | awk '{print $5}'"),
      sh("gzip-roundtrip", "seq 200000 | gzip -c | gunzip | sha256sum"),
      sh("bzip2-roundtrip", "seq 100000 | bzip2 -c | bzip2 -d | sha256sum"),
      // bash: pipelines, subshells, traps, background jobs, ignored signals handed on
      sh("bash-pipeline", "for i in $(seq 2000); do echo $((i * i)); done | awk '{s+=$1} END {print s}'"),
      sh("bash-subshells", "(echo a; (echo b | tr b c); echo $(echo d)) | sort | paste -sd,"),
      sh("bash-trap", "trap 'echo caught USR1' USR1; kill -USR1 $$; echo after; trap -p USR1"),
      sh("bash-trap-exit", "trap 'echo bye' EXIT; exit 3"),
      sh("bash-background", "sleep 0.1 & sleep 0.05 & wait; echo waited; jobs | wc -l"),
      sh("bash-ignored-handed-on", "trap '' INT QUIT TERM; grep -E '^Sig(Ign|Blk)' /proc/self/status"),
      sh("bash-wait-kill", "sleep 5 & kill -TERM $!; wait $!; echo status $?"),
      sh("bash-mask-handed-on", "grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status"),
      sh("bash-fds", "exec 3</dev/null; ls /proc/self/fd | sort -n"),
      sh("bash-env", "env | grep -v -e '^_=' -e '^PWD=' -e '^OLDPWD=' | sort"),
      sh("bash-functions", "f() { [ $1 -le 1 ] && echo 1 && return; echo $(( $1 * $(f $(( $1 - 1 ))) )); }; f 12"),
      // the programs' own views, as the programs themselves print them
      Command{"grep-own-signals", {"/bin/grep", "-E", "^Sig(Blk|Ign|Cgt)", "/proc/self/status"},
              false, true},
      Command{"ls-own-fds", {"/bin/ls", "/proc/self/fd"}, false, true},
      Command{"env-own-environment", {"/usr/bin/env", "-u", "PWD", "-u", "OLDPWD", "/usr/bin/env"}},
      // python3
      py("py-threads", "import threading\n"
                       "out = [0] * 4\n"
                       "def work(k):\n"
                       "    out[k] = sum(i * k for i in range(300000))\n"
                       "ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]\n"
                       "[t.start() for t in ts]; [t.join() for t in ts]\n"
                       "print(out)\n"),
      py("py-multiprocessing", "import multiprocessing as mp\n"
                               "def f(x): return sum(i * x for i in range(100000))\n"
                               "if __name__ == '__main__':\n"
                               "    with mp.Pool(2) as p: print(p.map(f, range(6)))\n"),
      py("py-subprocess", "import subprocess\n"
                          "r = subprocess.run(['sort', '-r'], input='a\\nb\\nc\\n', text=True,\n"
                          "                   capture_output=True)\n"
                          "print(r.stdout.split(), r.returncode)\n"),
      py("py-signals", "import os, signal\n"
                       "got = []\n"
                       "signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))\n"
                       "os.kill(os.getpid(), signal.SIGUSR1)\n"
                       "print(got, [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM,\n"
                       "       signal.SIGPIPE, signal.SIGUSR2, signal.SIGHUP)])\n"),
      Command{"py-own-view", {"/usr/bin/python3", "-c", "import os, signal\n"
                        "print(sorted(os.listdir('/proc/self/fd')))\n"
                        "print(sorted(k for k in os.environ if k != '_'))\n"
                        "print(sorted(signal.valid_signals() & signal.pthread_sigmask(\n"
                        "    signal.SIG_BLOCK, [])))\n"},
              false, true},
      py("py-json-re", "import json, re\n"
                       "s = 0\n"
                       "for i in range(20000):\n"
                       "    s += len(json.dumps({'a': i})) + len(re.findall(r'\\d', str(i)))\n"
                       "print(s)\n"),
      py("py-exit-code", "import sys; print('leaving'); sys.exit(7)"),
      // build tools
      sh("make-j2", "for i in 1 2 3 4; do printf 'int f%d(void){return %d;}\\n' $i $i > f$i.c; "
                    "done; printf 'all: f1.o f2.o f3.o f4.o\\n\\t@echo linked\\n%%.o: %%.c\\n\\t@gcc "
                    "-c $< -o $@\\n' > Makefile; make -j2 -s; ls *.o"),
      sh("gcc-compile", "printf '#include <stdio.h>\\nint main(void){puts(\"built\");return 0;}\\n' "
                        "> m.c; gcc -O2 -o m m.c && ./m && nm m | grep -c ' T '"),
      sh("git-commit", "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a "
                       "GIT_COMMITTER_EMAIL=a@b GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' "
                       "GIT_COMMITTER_DATE='2020-01-01T00:00:00Z' HOME=$PWD; git init -q -b main r "
                       "&& cd r && seq 100 > f && git add f && git commit -qm one && git log "
                       "--format=%H && git gc -q && git count-objects | cut -d' ' -f1"),
      // static programs: busybox and Go (only the kernel sampler reaches them)
      Command{"busybox-static", {"/bin/busybox", "sh", "-c",
                                 "busybox seq 20000 | busybox sort -n | busybox md5sum; busybox ls "
                                 "/proc/self/fd; busybox grep Sig /proc/self/status"},
              true},
      sh("busybox-child", "/bin/busybox sha1sum < /dev/null"),
      // perl (its own front-end, Devel::Hotline)
      Command{"perl-oneliner",
              {"/usr/bin/perl", "-e", "my %h; $h{$_ % 7}++ for 1..100000; print join(',', map "
                                       "{\"$_=$h{$_}\"} sort keys %h), \"\\n\""}},
  };
  return c;
}

// Go's static binary, built once per run from the source beside this file; "" without go.
std::string GoProgram() {
  static std::string built = [] {
    if (access("/usr/bin/go", X_OK) != 0) return std::string();
    std::string dir = ScratchDir("corpus-go");
    RunResult r = Execute({"/usr/bin/env", "HOME=" + dir, "GOCACHE=" + dir + "/cache",
                           "GOFLAGS=-mod=mod", "/usr/bin/go", "build", "-o", dir + "/gowork",
                           CORPUS_SOURCE_DIR "/gowork.go"},
                          dir);
    return r.exit_code == 0 ? dir + "/gowork" : std::string();
  }();
  return built;
}

struct Mode {
  const char* name;
  std::vector<std::string> options;
  bool needs_runtime;  // refused for a static program
};

const std::vector<Mode>& Modes() {
  static const std::vector<Mode> modes = {
      {"default", {}, false},
      {"heap-sample", {"--heap-sample"}, true},
      {"wall", {"--clock", "wall"}, false},
      {"follow-exec", {"--follow-exec"}, false},
      {"signal", {"--sampler", "signal"}, true},
  };
  return modes;
}

// What differs between two runs of the same command without any fault: the inode numbers of
// the pipes and sockets the harness gives as standard output and error. And, where the runtime
// is in the program (docs/record.md, "What enters the program"), what the kernel shows of it to
// a program that looks past its own calls: the signals it catches (SigCgt: the runtime ends the
// profile on a fatal signal) and the in-process sampler's descriptors, kept at 1000 and above.
std::string Normalised(const std::string& text, bool runtime) {
  static const std::regex inode(R"((pipe|socket):\[[0-9]+\])");
  std::string out = std::regex_replace(text, inode, "$1:[N]");
  // SigQ counts the signals queued to the whole user, other processes' too.
  static const std::regex queued(R"(SigQ:\s*[0-9]+/)");
  out = std::regex_replace(out, queued, "SigQ: N/");
  if (!runtime) return out;
  static const std::regex caught(R"(SigCgt:\s*[0-9a-f]+)");
  out = std::regex_replace(out, caught, "SigCgt: (the runtime's)");
  // ls's "1000\n" and Python's "'1000', ": the descriptors from 1000 on are the runtime's.
  static const std::regex listed(R"(\n1[0-9]{3}\n)"), quoted(R"(, '1[0-9]{3}')");
  for (int i = 0; i < 4; ++i) out = std::regex_replace(out, listed, "\n");
  out = std::regex_replace(out, quoted, "");
  return out;
}

void PrintTo(const Command& command, std::ostream* out) { *out << command.name; }

class Corpus : public ::testing::TestWithParam<Command> {};

TEST_P(Corpus, BehavesAsPlainInEveryMode) {
  Command command = GetParam();
  if (std::string(command.name) == "go-static") {
    command.argv = {GoProgram()};
    if (command.argv[0].empty()) GTEST_SKIP() << "no go toolchain";
  }
  RunResult plain = Execute(command.argv, ScratchDir(std::string("corpus-plain-") + command.name));
  for (const Mode& mode : Modes()) {
    std::string where = ScratchDir(std::string("corpus-") + command.name + "-" + mode.name);
    std::string profiles = ScratchDir(std::string("corpus-profiles-") + command.name);
    std::vector<std::string> argv = {HOTLINE_BIN, "record", "-q", "-o", profiles + "/p.hotline"};
    argv.insert(argv.end(), mode.options.begin(), mode.options.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
    RunResult recorded = Execute(argv, where);
    SCOPED_TRACE(std::string(command.name) + " under " + mode.name);
    if (command.is_static && mode.needs_runtime) {
      // Refused before it runs, with one line saying why.
      EXPECT_EQ(recorded.exit_code, 1) << recorded.err;
      EXPECT_NE(recorded.err.find("statically linked"), std::string::npos) << recorded.err;
      EXPECT_EQ(recorded.out, "");
      continue;
    }
    EXPECT_EQ(recorded.exit_code, plain.exit_code) << recorded.err;
    bool runtime_seen = mode.needs_runtime && command.own_kernel_view;
    EXPECT_EQ(Normalised(recorded.out, runtime_seen), Normalised(plain.out, runtime_seen));
    EXPECT_EQ(Normalised(recorded.err, runtime_seen), Normalised(plain.err, runtime_seen));
    std::vector<std::string> written = ProfilesIn(profiles);
    ASSERT_FALSE(written.empty());
    for (const std::string& path : written) {
      format::ReadStats stats;
      Expected<format::RawProfile> profile = format::LoadRawProfile(path, &stats);
      ASSERT_TRUE(profile.ok()) << path << ": " << profile.status().message();
      EXPECT_FALSE(stats.damaged()) << path << ": " << stats.summary();
      EXPECT_TRUE(profile->end.has_value()) << path;
    }
  }
}

std::vector<Command> WithGo() {
  std::vector<Command> all = Commands();
  all.push_back(Command{"go-static", {}, true});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Debian, Corpus, ::testing::ValuesIn(WithGo()),
                         [](const ::testing::TestParamInfo<Command>& info) {
                           std::string name;
                           for (const char* c = info.param.name; *c; ++c)
                             name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
                           return name;
                         });

}  // namespace
}  // namespace hotline
