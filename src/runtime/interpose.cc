// The functions the runtime interposes in the host, and the C API behind hotline.h. Each shim
// finds the real function with dlsym(RTLD_NEXT) and does as little as it can around it.
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "runtime/config.h"
#include "runtime/descriptors.h"
#include "runtime/modules.h"
#include "runtime/session.h"
#include "runtime/setxid.h"
#include "runtime/signals.h"
#include "runtime/threads.h"
#include "runtime/watch.h"

#define HOTLINE_EXPORT extern "C" __attribute__((visibility("default")))

namespace hotline::rt {
namespace {

template <typename Fn>
Fn Real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
  bool blocks_sample;  // the creator's view of its mask, which the new thread inherits
};

void* ThreadTrampoline(void* data) {
  ThreadStart start = *static_cast<ThreadStart*>(data);
  std::free(data);
  SetProgramBlocksSample(start.blocks_sample);
  {
    InRuntime guard;
    RegisterCurrentThread();
  }
  return start.routine(start.arg);
}

// A sampling signal that lands inside a blocking sleep makes it return EINTR early; the
// program did not ask for that, so the sleep goes on for the time that is left.
bool InterruptedOnlyByUs(int result_errno, unsigned long samples_before) {
  return result_errno == EINTR && Running() && SamplesOnThisThread() != samples_before;
}

constexpr int kMaxExecArgs = 4096;

// What is left of a millisecond timeout that started at `start_ns`; negative stays infinite.
int RemainingMs(int timeout_ms, uint64_t start_ns) {
  if (timeout_ms < 0) return timeout_ms;
  uint64_t elapsed_ms = (NowNs() - start_ns) / 1000000u;
  return elapsed_ms >= uint64_t(timeout_ms) ? 0 : timeout_ms - int(elapsed_ms);
}

}  // namespace
}  // namespace hotline::rt

using namespace hotline::rt;

HOTLINE_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                  void* (*routine)(void*), void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Fn real = Real<Fn>("pthread_create");
  if (!real) return EAGAIN;
  ProgramCreatesThread();
  if (!Running()) return real(thread, attr, routine, arg);
  auto* start = static_cast<ThreadStart*>(std::malloc(sizeof(ThreadStart)));
  if (!start) return real(thread, attr, routine, arg);
  *start = ThreadStart{routine, arg, ProgramBlocksSample()};
  g_session.live_threads.fetch_add(1);
  int result = real(thread, attr, ThreadTrampoline, start);
  if (result != 0) {
    g_session.live_threads.fetch_sub(1);
    std::free(start);
  }
  return result;
}

// C11's threads reach glibc's thread creation without passing pthread_create.
HOTLINE_EXPORT int thrd_create(thrd_t* thread, thrd_start_t routine, void* arg) {
  using Fn = int (*)(thrd_t*, thrd_start_t, void*);
  static Fn real = Real<Fn>("thrd_create");
  if (!real) return thrd_error;
  ProgramCreatesThread();
  return real(thread, routine, arg);
}

// The set*id family makes glibc signal every thread (setxid.h).
#define HOTLINE_SETXID_SHIM(name, params, args) \
  HOTLINE_EXPORT int name params {              \
    using Fn = int(*) params;                   \
    static Fn real = Real<Fn>(#name);           \
    if (!real) {                                \
      errno = ENOSYS;                           \
      return -1;                                \
    }                                           \
    SetxidCall lent;                            \
    return real args;                           \
  }
HOTLINE_SETXID_SHIM(setuid, (uid_t uid), (uid))
HOTLINE_SETXID_SHIM(setgid, (gid_t gid), (gid))
HOTLINE_SETXID_SHIM(seteuid, (uid_t uid), (uid))
HOTLINE_SETXID_SHIM(setegid, (gid_t gid), (gid))
HOTLINE_SETXID_SHIM(setreuid, (uid_t r, uid_t e), (r, e))
HOTLINE_SETXID_SHIM(setregid, (gid_t r, gid_t e), (r, e))
HOTLINE_SETXID_SHIM(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
HOTLINE_SETXID_SHIM(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
HOTLINE_SETXID_SHIM(setgroups, (size_t n, const gid_t* groups), (n, groups))
HOTLINE_SETXID_SHIM(initgroups, (const char* user, gid_t group), (user, group))
#undef HOTLINE_SETXID_SHIM

HOTLINE_EXPORT int pthread_setname_np(pthread_t thread, const char* name) {
  using Fn = int (*)(pthread_t, const char*);
  static Fn real = Real<Fn>("pthread_setname_np");
  if (!real) return ENOSYS;
  int result = real(thread, name);
  if (result == 0 && Running() && pthread_equal(thread, pthread_self())) {
    InRuntime guard;
    RecordThreadName(GetTid(), name);
  }
  return result;
}

HOTLINE_EXPORT void exit(int code) {
  using Fn = void (*)(int);
  static Fn real = Real<Fn>("exit");
  g_session.exit_code = uint64_t(code);
  g_session.exit_code_known = true;
  real(code);
  __builtin_unreachable();
}

HOTLINE_EXPORT void _exit(int code) {
  using Fn = void (*)(int);
  static Fn real = Real<Fn>("_exit");
  InRuntime guard;
  FinishSession(hotline::format::EndHow::kUnderscoreExit, uint64_t(code), true);
  real(code);
  __builtin_unreachable();
}

HOTLINE_EXPORT void _Exit(int code) { _exit(code); }

// An address means the image mapped there at that time: a library dlopened where a closed one
// was has other functions at the same addresses. The module map is brought up to date before
// the close (a library opened since the last round is known) and right after it, so that what
// was counted in a library that went away is written, named after it, before its unload.
// (dlopen is not interposed: session.cc, CheckModulesLocked.)
HOTLINE_EXPORT int dlclose(void* handle) {
  using Fn = int (*)(void*);
  static Fn real = Real<Fn>("dlclose");
  if (!real) return -1;
  if (!Running()) return real(handle);
  {
    InRuntime guard;
    LockSession();
    CheckModulesLocked();
    UnlockSession();
  }
  int result = real(handle);
  InRuntime guard;
  LockSession();
  CheckModulesLocked();
  UnlockSession();
  return result;
}

// glibc's daemon() forks, and its parent leaves through an _exit inside libc that no shim sees:
// the parent's profile would never be written. So the fork and the parent's _exit are made here,
// and the child does what glibc's does: a new session, "/" unless nochdir, and /dev/null (when
// it is the character device 1,3) on descriptors 0-2 unless noclose.
HOTLINE_EXPORT int daemon(int nochdir, int noclose) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid > 0) _exit(0);
  if (setsid() < 0) return -1;
  if (!nochdir) (void)chdir("/");
  if (noclose) return 0;
  int fd = open("/dev/null", O_RDWR);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
    close(fd);
    errno = ENODEV;
    return -1;
  }
  dup2(fd, STDIN_FILENO);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  if (fd > 2) close(fd);
  return 0;
}

HOTLINE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  using Fn = int (*)(const char*, char* const[], char* const[]);
  static Fn real = Real<Fn>("execve");
  ExecEnvironment env(envp);
  FlushBeforeExec();
  int result = real(path, argv, env.get());
  ResumeAfterFailedExec();
  return result;
}

HOTLINE_EXPORT int execv(const char* path, char* const argv[]) {
  using Fn = int (*)(const char*, char* const[]);
  static Fn real = Real<Fn>("execv");
  FlushBeforeExec();
  int result = real(path, argv);
  ResumeAfterFailedExec();
  return result;
}

HOTLINE_EXPORT int execvp(const char* file, char* const argv[]) {
  using Fn = int (*)(const char*, char* const[]);
  static Fn real = Real<Fn>("execvp");
  FlushBeforeExec();
  int result = real(file, argv);
  ResumeAfterFailedExec();
  return result;
}

HOTLINE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  using Fn = int (*)(const char*, char* const[], char* const[]);
  static Fn real = Real<Fn>("execvpe");
  ExecEnvironment env(envp);
  FlushBeforeExec();
  int result = real(file, argv, env.get());
  ResumeAfterFailedExec();
  return result;
}

// posix_spawn runs its child's exec inside glibc: only the environment is the runtime's
// business (followed children keep its variables).
#define HOTLINE_SPAWN_SHIM(name)                                                                   \
  HOTLINE_EXPORT int name(pid_t* pid, const char* where, const posix_spawn_file_actions_t* acts,   \
                          const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) { \
    using Fn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,                     \
                       const posix_spawnattr_t*, char* const[], char* const[]);                    \
    static Fn real = Real<Fn>(#name);                                                              \
    if (!real) return ENOSYS;                                                                      \
    ExecEnvironment env(envp);                                                                     \
    return real(pid, where, acts, attr, argv, env.get());                                          \
  }
HOTLINE_SPAWN_SHIM(posix_spawn)
HOTLINE_SPAWN_SHIM(posix_spawnp)
#undef HOTLINE_SPAWN_SHIM

// The execl family collects its variable arguments into an array for the execv family. The
// list ends with a null pointer; arguments past kMaxExecArgs are passed over (to reach execle's
// environment after the null).
namespace hotline::rt {
namespace {
void CollectArgs(const char* first, va_list* ap, char** argv) {
  int n = 0;
  const char* a = first;
  for (; a; a = va_arg(*ap, const char*))
    if (n < kMaxExecArgs - 1) argv[n++] = const_cast<char*>(a);
  argv[n] = nullptr;
}
}  // namespace
}  // namespace hotline::rt

HOTLINE_EXPORT int execl(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  CollectArgs(arg, &ap, argv);
  va_end(ap);
  return execv(path, argv);
}

HOTLINE_EXPORT int execlp(const char* file, const char* arg, ...) {
  char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  CollectArgs(arg, &ap, argv);
  va_end(ap);
  return execvp(file, argv);
}

HOTLINE_EXPORT int execle(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  CollectArgs(arg, &ap, argv);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, argv, envp);
}

HOTLINE_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (IsManagedSignal(sig)) return ProgramSigaction(sig, act, old);
  int result = 0;
  if (ProgramToggleSigaction(sig, act, old, &result)) return result;
  if (!act) return RealSigaction(sig, act, old);
  // A handler that blocks every signal while it runs must not hold samples back either.
  struct sigaction without_sample = *act;
  StripSampleSignal(&without_sample.sa_mask);
  return RealSigaction(sig, &without_sample, old);
}

HOTLINE_EXPORT int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  static SigmaskFn real = Real<SigmaskFn>("pthread_sigmask");
  return ProgramSigmask(how, set, old, real);
}

HOTLINE_EXPORT int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  static SigmaskFn real = Real<SigmaskFn>("sigprocmask");
  return ProgramSigmask(how, set, old, real);
}

HOTLINE_EXPORT int sigaltstack(const stack_t* ss, stack_t* old) {
  return ProgramSigaltstack(ss, old);
}

HOTLINE_EXPORT sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction act = {}, old = {};
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;  // BSD semantics, as glibc's signal() gives
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

HOTLINE_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* request,
                                   struct timespec* remain) {
  using Fn = int (*)(clockid_t, int, const struct timespec*, struct timespec*);
  static Fn real = Real<Fn>("clock_nanosleep");
  if (!request) return real(clock, flags, request, remain);
  // Retries go on to the original deadline: sleeping again for the time left would drift by
  // the time the handlers took.
  struct timespec deadline = *request;
  if (!(flags & TIMER_ABSTIME)) {
    struct timespec now;
    if (clock_gettime(clock, &now) != 0) return real(clock, flags, request, remain);
    deadline.tv_sec += now.tv_sec;
    deadline.tv_nsec += now.tv_nsec;
    if (deadline.tv_nsec >= 1000000000L) deadline.tv_nsec -= 1000000000L, ++deadline.tv_sec;
  }
  unsigned long before = SamplesOnThisThread();
  int result = real(clock, flags, request, remain);
  while (result == EINTR && InterruptedOnlyByUs(result, before)) {
    before = SamplesOnThisThread();
    result = real(clock, flags | TIMER_ABSTIME, &deadline, nullptr);
  }
  if (result == EINTR && remain && !(flags & TIMER_ABSTIME)) {
    // Interrupted by the program's own signal after a retry: report the time really left.
    struct timespec now;
    clock_gettime(clock, &now);
    int64_t left = (deadline.tv_sec - now.tv_sec) * 1000000000LL + (deadline.tv_nsec - now.tv_nsec);
    if (left < 0) left = 0;
    *remain = timespec{time_t(left / 1000000000LL), long(left % 1000000000LL)};
  }
  return result;
}

HOTLINE_EXPORT int nanosleep(const struct timespec* request, struct timespec* remain) {
  // Linux measures nanosleep on CLOCK_MONOTONIC.
  int result = clock_nanosleep(CLOCK_MONOTONIC, 0, request, remain);
  if (result == 0) return 0;
  errno = result;
  return -1;
}

HOTLINE_EXPORT unsigned int sleep(unsigned int seconds) {
  struct timespec request = {time_t(seconds), 0}, remain = {};
  if (nanosleep(&request, &remain) == 0) return 0;
  return unsigned(remain.tv_sec) + (remain.tv_nsec > 0 ? 1 : 0);
}

HOTLINE_EXPORT int usleep(useconds_t usec) {
  struct timespec request = {time_t(usec / 1000000), long(usec % 1000000) * 1000};
  return nanosleep(&request, nullptr);
}

HOTLINE_EXPORT int poll(struct pollfd* fds, nfds_t count, int timeout_ms) {
  using Fn = int (*)(struct pollfd*, nfds_t, int);
  static Fn real = Real<Fn>("poll");
  uint64_t start = NowNs();
  for (;;) {
    unsigned long before = SamplesOnThisThread();
    int result = real(fds, count, RemainingMs(timeout_ms, start));
    if (result >= 0 || !InterruptedOnlyByUs(errno, before)) return result;
  }
}

HOTLINE_EXPORT int epoll_wait(int epfd, struct epoll_event* events, int max, int timeout_ms) {
  using Fn = int (*)(int, struct epoll_event*, int, int);
  static Fn real = Real<Fn>("epoll_wait");
  uint64_t start = NowNs();
  for (;;) {
    unsigned long before = SamplesOnThisThread();
    int result = real(epfd, events, max, RemainingMs(timeout_ms, start));
    if (result >= 0 || !InterruptedOnlyByUs(errno, before)) return result;
  }
}

// Linux's select writes the time left into *timeout, so a retry simply passes it again; the fd
// sets are restored from a copy because an interrupted select may have cleared them.
HOTLINE_EXPORT int select(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds,
                          struct timeval* timeout) {
  using Fn = int (*)(int, fd_set*, fd_set*, fd_set*, struct timeval*);
  static Fn real = Real<Fn>("select");
  fd_set r, w, e;
  if (readfds) r = *readfds;
  if (writefds) w = *writefds;
  if (exceptfds) e = *exceptfds;
  for (;;) {
    unsigned long before = SamplesOnThisThread();
    int result = real(nfds, readfds, writefds, exceptfds, timeout);
    if (result >= 0 || !InterruptedOnlyByUs(errno, before)) return result;
    if (readfds) *readfds = r;
    if (writefds) *writefds = w;
    if (exceptfds) *exceptfds = e;
  }
}

// The descriptor family: the runtime's own descriptors (descriptors.h) are not the program's to
// close or to replace. close reports success for them and leaves them open; a dup2 onto one
// hands it over first, so the program gets the number as it would without hotline.
HOTLINE_EXPORT int close(int fd) {
  using Fn = int (*)(int);
  static Fn real = Real<Fn>("close");
  ProgramDescriptorCall wait;
  if (IsOwnDescriptor(fd)) {
    // The runtime's own code (libunwind renewing its pipe) closes its descriptors for real.
    if (IsRuntimeCode(__builtin_return_address(0))) CloseOwnDescriptor(fd);
    return 0;
  }
  return real(fd);
}

// libunwind validates every stack address it reads by writing a byte of it into a pipe of its
// own, opened at its first use and kept in a static array. A program that closes every
// descriptor would close that pipe and reuse its numbers for its own files, which libunwind
// would then read from and close. Its pipe is made the runtime's: moved high, out of the
// program's way, like the runtime's other descriptors.
HOTLINE_EXPORT int pipe2(int fds[2], int flags) {
  using Fn = int (*)(int[2], int);
  static Fn real = Real<Fn>("pipe2");
  if (!IsRuntimeCode(__builtin_return_address(0))) return real(fds, flags);
  CreatingDescriptor hold;
  int result = real(fds, flags);
  if (result == 0) {
    fds[0] = AdoptDescriptor(fds[0], nullptr);
    fds[1] = AdoptDescriptor(fds[1], nullptr);
  }
  return result;
}

HOTLINE_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  using Fn = int (*)(unsigned, unsigned, int);
  static Fn real = Real<Fn>("close_range");
  ProgramDescriptorCall wait;
  // With CLOSE_RANGE_CLOEXEC nothing is closed, and ours are close-on-exec already.
  if ((flags & CLOSE_RANGE_CLOEXEC) || !OwnDescriptorIn(first, last)) {
    if (real) return real(first, last, flags);
    return int(syscall(SYS_close_range, first, last, flags));
  }
  return CloseRangeExceptOwn(first, last, flags);
}

HOTLINE_EXPORT void closefrom(int low) {
  using Fn = void (*)(int);
  static Fn real = Real<Fn>("closefrom");
  ProgramDescriptorCall wait;
  if (low < 0) low = 0;
  if (real && !OwnDescriptorIn(unsigned(low), ~0u)) return real(low);
  CloseRangeExceptOwn(unsigned(low), ~0u, 0);
}

namespace hotline::rt {
namespace {
void HandOverBeforeDup(int target) {
  if (!IsOwnDescriptor(target)) return;
  InRuntime guard;
  HandOverDescriptor(target);
}
}  // namespace
}  // namespace hotline::rt

HOTLINE_EXPORT int dup2(int old_fd, int new_fd) {
  using Fn = int (*)(int, int);
  static Fn real = Real<Fn>("dup2");
  ProgramDescriptorCall wait;
  if (old_fd != new_fd) HandOverBeforeDup(new_fd);
  return real(old_fd, new_fd);
}

HOTLINE_EXPORT int dup3(int old_fd, int new_fd, int flags) {
  using Fn = int (*)(int, int, int);
  static Fn real = Real<Fn>("dup3");
  ProgramDescriptorCall wait;
  if (old_fd != new_fd) HandOverBeforeDup(new_fd);
  return real(old_fd, new_fd, flags);
}

// The C API (include/hotline/hotline.h finds these with dlsym).
HOTLINE_EXPORT void hotline_rt_start(void) {
  InRuntime guard;
  RecordState(true, hotline::format::StateSource::kApi);
}

HOTLINE_EXPORT void hotline_rt_stop(void) {
  InRuntime guard;
  RecordState(false, hotline::format::StateSource::kApi);
}

HOTLINE_EXPORT void hotline_rt_mark(const char* label) {
  InRuntime guard;
  RecordMark(label);
}

HOTLINE_EXPORT int hotline_rt_watch(const void* address, unsigned long size, const char* name) {
  InRuntime guard;
  return WatchObject(address, size, name);
}

HOTLINE_EXPORT int hotline_rt_unwatch(const void* address) {
  InRuntime guard;
  return UnwatchObject(address);
}

HOTLINE_EXPORT void hotline_rt_size(unsigned long long n) {
  InRuntime guard;
  RecordSize(uint64_t(n));
}

// Start-up and the end run entirely as runtime code: what they allocate is not the program's.
__attribute__((constructor(101))) static void HotlineRuntimeStart() {
  InRuntime guard;
  StartSession();
}

__attribute__((destructor(101))) static void HotlineRuntimeEnd() {
  InRuntime guard;
  FinishSession(hotline::format::EndHow::kExit, g_session.exit_code, false);
}
