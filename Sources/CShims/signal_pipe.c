#include "CShims.h"
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile int anonauth_signal_pipe = -1;

/* Runs in signal context, on whichever thread the kernel chose: only write(2), which is
   async-signal-safe, and errno put back as it was. */
static void anonauth_signal_to_pipe(int number) {
  int saved = errno;
  unsigned char byte = (unsigned char)number;
  ssize_t ignored = write(anonauth_signal_pipe, &byte, 1);
  (void)ignored;
  errno = saved;
}

int anonauth_signals_to_pipe(int write_fd, const int *signals, int count) {
  anonauth_signal_pipe = write_fd;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = anonauth_signal_to_pipe;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < count; i++) {
    if (sigaction(signals[i], &action, NULL) != 0) return -1;
  }
  return 0;
}
