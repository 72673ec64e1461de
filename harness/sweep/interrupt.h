// Ctrl-C for the sweep runner: the first SIGINT (or SIGTERM, which Slurm sends before a job's time
// limit) asks for a graceful stop: training writes its checkpoint and the cell is marked
// interrupted, so the same command resumes it. The handler then restores the default action, so a
// second signal kills the process at once.
#pragma once

namespace attnbench::sweep {

void install_interrupt_handler();
// Records a stop that reached a child job instead of this process (a local launcher handles Ctrl-C
// itself while its ranks run), with the handler's effect: no new cell starts, a second signal kills.
void mark_interrupted(int sig);
bool interrupted();
// The signal that asked for the stop (SIGINT or SIGTERM), 0 when none did.
int interrupt_signal();

}  // namespace attnbench::sweep
