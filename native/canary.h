// `cordon-exec canary`: the probe's canary command. Run confined, it attempts one operation of
// every effect class and prints, per attempt, "name errno" (0: the operation succeeded), so the
// host can tell which classes this backend really governs on this kernel, in one spawn.
#pragma once

namespace cordon {

// Runs the attempts against DIR (argv[2]) and the host process HOST_PID (argv[3]); returns the
// exit code (0 unless misused).
int run_canary(int argc, char** argv);

}  // namespace cordon
