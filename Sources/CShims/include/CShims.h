#ifndef ANONAUTH_CSHIMS_H
#define ANONAUTH_CSHIMS_H
// What Swift cannot import directly: Linux event APIs missing from Glibc's module,
// OpenSSL function-like macros, and helpers that keep pointer casts out of Swift.
#include <sys/types.h>
#include <semaphore.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

/// accept4 is hidden behind _GNU_SOURCE in Glibc's module.
int anonauth_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/// Names the calling thread for `top -H` and profilers (at most 15 bytes are kept).
void anonauth_set_thread_name(const char *name);

/* sem_wait, again after a signal interrupts it. */
void anonauth_sem_wait(sem_t *sem);
/* Waits on `sem` at most `nanoseconds` measured on CLOCK_MONOTONIC (sem_timedwait's
   deadline is on the wall clock, which an operator or NTP can step): 0 when posted,
   -1 when the time ran out. */
int anonauth_sem_wait_monotonic(sem_t *sem, uint64_t nanoseconds);

/// Every signal in `signals` writes its number as one byte to `write_fd` (a non-blocking
/// pipe), from a handler that does nothing else. Unlike a Dispatch signal source, which
/// misses a signal the kernel hands to a thread that does not block it (the main thread
/// parked by dispatch_main does not), a handler runs on whichever thread gets the signal.
/// Returns 0, or -1 with errno set.
int anonauth_signals_to_pipe(int write_fd, const int *signals, int count);

/// errno as a function: Swift reads it at once after a failing call.
int anonauth_errno(void);

/// glibc's malloc_trim(0): returns freed heap to the system (<malloc.h> is not in Swift's
/// Glibc module).
int anonauth_malloc_trim(void);
/// Sets glibc's mmap and trim thresholds (bytes); 1 when both were taken.
int anonauth_set_heap_thresholds(int mmap_threshold, int trim_threshold);
/// pipe2(fds, O_CLOEXEC): both ends close on exec (pipe2 is not in Swift's Glibc module).
int anonauth_pipe_cloexec(int fds[2]);
/// posix_spawn of `path` with NULL-terminated `argv` and `envp`: stdin from /dev/null,
/// stdout and stderr onto `out_fd` and `err_fd` (-1 keeps the parent's), and no other
/// descriptor of the parent's. Returns 0 and sets `*pid`, or an errno value. For the
/// tests' child processes (see ChildProcess).
int anonauth_spawn(const char *path, char *const argv[], char *const envp[], int out_fd, int err_fd,
                   pid_t *pid);

// OpenSSL macros.
int anonauth_ssl_ctx_set_min_proto(SSL_CTX *ctx, int version);
int anonauth_ssl_ctx_set_max_proto(SSL_CTX *ctx, int version);
long anonauth_ssl_ctx_set_mode(SSL_CTX *ctx, long mode);
int anonauth_ssl_set_tlsext_host_name(SSL *ssl, const char *name);
int anonauth_ssl_ctx_set_session_cache_off(SSL_CTX *ctx);

/// No renegotiation, no compression; partial and moving writes for non-blocking I/O;
/// buffers released while a connection is idle (SSL_OP_* are function-like macros).
void anonauth_ssl_ctx_harden(SSL_CTX *ctx);

/// EVP_EC_gen / EVP_RSA_gen are macros over the variadic EVP_PKEY_Q_keygen.
EVP_PKEY *anonauth_ec_p256_keygen(void);
EVP_PKEY *anonauth_rsa_keygen(unsigned int bits);

/// Public keys from JWK material through OSSL_PARAM_BLD and EVP_PKEY_fromdata. Done in C
/// because the builder keeps pointers to parameter names and values (it copies them only
/// in OSSL_PARAM_BLD_to_param, and the names not even then) and EVP_PKEY_CTX keeps its key
/// type name: Swift's temporary C strings would dangle. NULL on failure (error queue set).
EVP_PKEY *anonauth_rsa_public_key(const unsigned char *n, size_t n_len, const unsigned char *e,
                                  size_t e_len);
/// `point` is the uncompressed SEC1 point 0x04 || x || y on P-256; off-curve points fail.
EVP_PKEY *anonauth_ec_p256_public_key(const unsigned char *point, size_t len);

/// Installs the server's ALPN selection over `list`, its protocols in its order of
/// preference in ALPN wire format (each name prefixed by its length, at most 512 bytes):
/// the first of them the client offers is chosen; a client that offers ALPN with none of
/// them gets no_application_protocol, a client with no ALPN is accepted. Returns 0 when
/// the list is empty or too long (nothing installed).
int anonauth_ssl_ctx_select_alpn(SSL_CTX *ctx, const unsigned char *list, unsigned int len);

/// The selected ALPN protocol (or len 0).
void anonauth_ssl_get_alpn(const SSL *ssl, const unsigned char **data, unsigned int *len);

/// Runs the event for this many bytes: epoll_event's packed layout is awkward in Swift.
int anonauth_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
int anonauth_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms);

/// No core file for this process (RLIMIT_CORE 0, soft and hard) and not dumpable
/// (PR_SET_DUMPABLE 0: a crash is dumped, to a pipe handler such as systemd-coredump too,
/// only if fs.suid_dumpable allows it, which it does not by default; and other processes of
/// the same user cannot ptrace it or read its memory through /proc).
/// 0 when both took effect, else -1.
int anonauth_disable_core_dumps(void);

#endif
