#include "runtime/setxid.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hotline::rt {
namespace {

// glibc's sigaction and sigprocmask refuse or filter its own signals: the kernel's are used.
struct KernelSigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  unsigned long mask;
};

constexpr int kSetxid = __SIGRTMIN + 1;
constexpr unsigned long Bit(int sig) { return 1ul << (sig - 1); }
constexpr unsigned long kLibcBits = Bit(__SIGRTMIN) | Bit(__SIGRTMIN + 1);

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_lent = false;  // 33 is ignored for the program while glibc's handler waits here
KernelSigaction g_glibc_handler;
unsigned long g_owed_unblock = 0;  // what glibc unblocks at the program's first thread

bool GetAction(KernelSigaction* out) {
  return syscall(SYS_rt_sigaction, kSetxid, nullptr, out, sizeof(unsigned long)) == 0;
}

void SetAction(const KernelSigaction& act) {
  syscall(SYS_rt_sigaction, kSetxid, &act, nullptr, sizeof(unsigned long));
}

void SetIgnored() {
  KernelSigaction ignore = {};
  ignore.handler = reinterpret_cast<void*>(SIG_IGN);
  SetAction(ignore);
}

bool Mask(int how, const unsigned long* set, unsigned long* old) {
  return syscall(SYS_rt_sigprocmask, how, set, old, sizeof(unsigned long)) == 0;
}

}  // namespace

LibcSignals ReadLibcSignals() {
  int saved = errno;
  LibcSignals before;
  KernelSigaction act;
  unsigned long mask = 0;
  if (GetAction(&act) && Mask(SIG_BLOCK, nullptr, &mask)) {
    before.known = true;
    before.setxid_ignored = act.handler == reinterpret_cast<void*>(SIG_IGN);
    before.blocked = mask & kLibcBits;
  }
  errno = saved;
  return before;
}

void RestoreLibcSignals(const LibcSignals& before) {
  if (!before.known) return;
  int saved = errno;
  pthread_mutex_lock(&g_lock);
  KernelSigaction now;
  if (before.setxid_ignored && GetAction(&now) && now.handler != reinterpret_cast<void*>(SIG_IGN)) {
    g_glibc_handler = now;
    g_lent = true;
    SetIgnored();
  }
  unsigned long mask = 0;
  if (before.blocked && Mask(SIG_BLOCK, nullptr, &mask) && (before.blocked & ~mask)) {
    unsigned long reblock = before.blocked & ~mask;
    Mask(SIG_BLOCK, &reblock, nullptr);
    g_owed_unblock |= reblock;
  }
  pthread_mutex_unlock(&g_lock);
  errno = saved;
}

void ProgramCreatesThread() {
  int saved = errno;
  pthread_mutex_lock(&g_lock);
  if (g_lent) SetAction(g_glibc_handler);
  g_lent = false;
  if (g_owed_unblock) Mask(SIG_UNBLOCK, &g_owed_unblock, nullptr);
  g_owed_unblock = 0;
  pthread_mutex_unlock(&g_lock);
  errno = saved;
}

SetxidCall::SetxidCall() {
  int saved = errno;
  pthread_mutex_lock(&g_lock);
  if (g_lent) SetAction(g_glibc_handler);
  errno = saved;
}

// Every thread has answered by the time the call returns: ignoring 33 again drops nothing.
SetxidCall::~SetxidCall() {
  int saved = errno;
  if (g_lent) SetIgnored();
  pthread_mutex_unlock(&g_lock);
  errno = saved;
}

void ResetSetxidAfterFork() { pthread_mutex_init(&g_lock, nullptr); }

}  // namespace hotline::rt
