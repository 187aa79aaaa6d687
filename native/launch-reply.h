// The reply to one launcher request, sent to the host by the run's supervisor itself (or by the
// launcher when no supervisor could say): {u32 magic "CLR1", i32 errno, char stage[16],
// i32 supervisor pid, i32 command pid}, carrying the supervisor's pidfd.
// src/subprocess/launcher/wire.ts reads it.
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include <vector>

namespace cordon {

constexpr uint32_t kReplyMagic = 0x31524c43;  // "CLR1"

struct Reply {
  uint32_t magic = kReplyMagic;
  int32_t error = 0;
  char stage[16] = {0};
  int32_t supervisor_pid = -1;
  int32_t command_pid = -1;
};

// What a supervisor tells its launcher over the launcher's event pipe, in one atomic write.
struct LauncherEvent {
  int32_t id;    // the supervisor's id, given by its launcher (StartChannel::event_id)
  int32_t what;  // kEventTaken: it read a request; kEventReplying: the host's answer is on its way
};
constexpr int32_t kEventTaken = 1;
constexpr int32_t kEventReplying = 2;

// Sends one reply (fds ride along on success); errors are ignored (the host may be gone).
void send_reply(int control, int error, const char* stage, pid_t supervisor, pid_t command, const int* fds, int n);

// How a supervisor tells its starter that the command runs, or why not.
struct StartChannel {
  int status_fd = -1;       // argv mode: "started PID" / "error STAGE ERRNO" go here
  int control_fd = -1;      // launcher mode: the reply goes to the host over this socket,
  int events_fd = -1;       // after a kEventReplying here tells the launcher it is being sent
  int32_t event_id = 0;     // how the supervisor names itself on events_fd
  int self_pidfd = -1;      // launcher mode: our own pidfd for the reply, opened before the command runs
  int proxy_listener = -1;  // launcher mode: a network allow-list's listener, handed over with the reply
};

}  // namespace cordon
