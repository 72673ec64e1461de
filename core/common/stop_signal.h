// SIGINT (Ctrl-C) and SIGTERM (what `kill` and Slurm, before a job's time limit, send) ask a
// command to stop, under one policy for every command (docs/reliability.md, "Stopping"):
//   - the first signal asks: stop_requested() turns true, and the command finishes what keeps its
//     work resumable (a checkpoint, a cell marked interrupted, a temporary folder removed), then
//     exits as interrupted;
//   - a second one, of either kind, ends the process at once by the signal's default action (child
//     processes started by core/common/process.h's spawn() die with it: PR_SET_PDEATHSIG).
// The handler only stores and re-raises: everything it does is async-signal-safe.
#pragma once
namespace attnbench {

// Installs the handler for SIGINT and SIGTERM while it lives and restores the handlers it replaced.
// The outermost one starts with no stop requested.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

bool stop_requested();
int stop_signal();  // the signal that asked (SIGINT or SIGTERM); 0 when none did

// Records a stop that reached a child process instead of this one (a cell run in a child that
// exited as interrupted), with the first signal's effect: the next signal is the second.
void request_stop(int sig);

}  // namespace attnbench
