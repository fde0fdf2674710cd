// glibc's own signals around the runtime's thread. The first thread a process creates makes
// glibc handle SIGSETXID (33), which setuid() and its kin send to every other thread, and
// unblock SIGCANCEL and SIGSETXID (32, 33) in the creator. A program started with 33 ignored
// (under nohup, from a background shell) that never creates a thread keeps it ignored, and
// hands it on ignored across exec; the runtime's writer thread must not change that. So the
// runtime puts both back after creating its thread, lends glibc its handler only for the
// calls that need it (the set*id family), and gives it for good when the program creates a
// thread of its own, as glibc would have then.
#pragma once

namespace hotline::rt {

// What the runtime's thread creation may change, read before it.
struct LibcSignals {
  bool known = false;
  bool setxid_ignored = false;
  unsigned long blocked = 0;  // of 32 and 33, in the creating thread
};
LibcSignals ReadLibcSignals();
// After the runtime created its thread: 33's disposition and the creator's mask as `before`.
void RestoreLibcSignals(const LibcSignals& before);

// The program creates a thread: what glibc would have done at its first one, done now.
void ProgramCreatesThread();

// Held around a set*id call: glibc's handler is on 33 meanwhile, so every thread answers.
class SetxidCall {
 public:
  SetxidCall();
  ~SetxidCall();
  SetxidCall(const SetxidCall&) = delete;
  SetxidCall& operator=(const SetxidCall&) = delete;
};

// A forked child starts with the lock free (another thread may have held it at the fork).
void ResetSetxidAfterFork();

}  // namespace hotline::rt
