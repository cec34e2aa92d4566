#include "CShims.h"
#include <sys/prctl.h>
#include <sys/resource.h>

int anonauth_disable_core_dumps(void) {
  struct rlimit none = {0, 0};
  int failed = setrlimit(RLIMIT_CORE, &none) != 0;
  // prctl is variadic: Swift cannot call it.
  failed |= prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0;
  return failed ? -1 : 0;
}
