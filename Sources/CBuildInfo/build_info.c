#include "CBuildInfo.h"

// `make build-info` writes this header with ANONAUTH_BUILD_COMMIT and ANONAUTH_BUILD_DATE
// (and touches this file, so a header that appeared since the last build is read).
#if __has_include("generated_build_info.h")
#include "generated_build_info.h"
#endif

// Bumped by hand at each release.
#define ANONAUTH_VERSION "0.1.0"

#ifndef ANONAUTH_BUILD_COMMIT
#define ANONAUTH_BUILD_COMMIT "unknown"
#endif
#ifndef ANONAUTH_BUILD_DATE
#define ANONAUTH_BUILD_DATE "unknown"
#endif

const char *anonauth_build_version(void) { return ANONAUTH_VERSION; }
const char *anonauth_build_commit(void) { return ANONAUTH_BUILD_COMMIT; }
const char *anonauth_build_date(void) { return ANONAUTH_BUILD_DATE; }
