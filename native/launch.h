// One supervised run from a LaunchSpec: become the run's supervisor (subreaper, parent-death
// signal, private namespaces), build the command's Landlock ruleset when the plan came as rules,
// fork the command (which confines itself and execs), report the start, then supervise.
#pragma once

#include "launch-spec.h"
#include "spawn.h"

namespace cordon {

// The start report a supervisor sends its launcher over the ready pipe.
struct StartRecord {
  int32_t error = 0;  // 0: started
  char stage[16] = {0};
  int32_t command_pid = -1;
};

// Runs the whole supervised life of one command. `ready_fd` >= 0 receives a StartRecord (the
// zygote path); otherwise the start goes to `status_fd` as "started PID" / "error STAGE ERRNO".
[[noreturn]] void run_supervised(SpawnContext* ctx, LaunchSpec* spec, int status_fd, int ready_fd);

}  // namespace cordon
