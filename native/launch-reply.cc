// The launcher's reply record.
#include "launch-reply.h"

#include <stdio.h>

#include "fd-channel.h"

namespace cordon {

void send_reply(int control, int error, const char* stage, pid_t supervisor, pid_t command, const int* fds, int n) {
  Reply reply;
  reply.error = error;
  if (stage != nullptr) snprintf(reply.stage, sizeof reply.stage, "%s", stage);
  reply.supervisor_pid = supervisor;
  reply.command_pid = command;
  send_with_fds(control, &reply, sizeof reply, fds, error == 0 ? n : 0);
}

}  // namespace cordon
