#ifndef ANONAUTH_CBUILDINFO_H
#define ANONAUTH_CBUILDINFO_H
// What `--version` prints: the release, the commit and the build date. The release is
// written in build_info.c; the commit and date come from generated_build_info.h, which
// `make build` writes (and git ignores). A plain `swift build` has no such file and
// reports them as unknown.

/// The release version, e.g. "0.9.0".
const char *anonauth_build_version(void);
/// The git commit the binary was built from (short hash, "-dirty" with local changes),
/// or "unknown".
const char *anonauth_build_commit(void);
/// The UTC day of the build (YYYY-MM-DD), or "unknown".
const char *anonauth_build_date(void);

#endif
