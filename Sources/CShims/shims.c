#define _GNU_SOURCE
#include "CShims.h"
#include <limits.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <malloc.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include <time.h>
#include <sys/syscall.h>

int anonauth_errno(void) { return errno; }

int anonauth_malloc_trim(void) { return malloc_trim(0); }

int anonauth_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int anonauth_spawn(const char *path, char *const argv[], char *const envp[], int out_fd, int err_fd,
                   pid_t *pid) {
  posix_spawn_file_actions_t actions;
  int rc = posix_spawn_file_actions_init(&actions);
  if (rc != 0) return rc;
  rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0 && out_fd >= 0) rc = posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  if (rc == 0 && err_fd >= 0) rc = posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  /* The child gets its three streams and nothing else, whether or not a library marked
     its descriptors close-on-exec (libdqlite's listener is not: a child holding it kept
     a stopped node's port). */
  if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (rc == 0) rc = posix_spawn(pid, path, &actions, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

int anonauth_set_heap_thresholds(int mmap_threshold, int trim_threshold) {
  return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
}

void anonauth_set_thread_name(const char *name) {
  char shortened[16];
  strncpy(shortened, name, sizeof shortened - 1);
  shortened[sizeof shortened - 1] = 0;
  pthread_setname_np(pthread_self(), shortened);
}

void anonauth_sem_wait(sem_t *sem) {
  while (sem_wait(sem) != 0 && errno == EINTR) {
  }
}

int anonauth_sem_wait_monotonic(sem_t *sem, uint64_t nanoseconds) {
  /* The deadline is compared by the kernel with its own monotonic clock, so it is read
     from the kernel too: a clock_gettime that an LD_PRELOAD time faker (libfaketime, as
     the crash tests use) shifts would put it days away. */
  struct timespec deadline;
  if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &deadline) != 0) return -1;
  uint64_t total = (uint64_t)deadline.tv_nsec + nanoseconds % 1000000000u;
  deadline.tv_sec += (time_t)(nanoseconds / 1000000000u + total / 1000000000u);
  deadline.tv_nsec = (long)(total % 1000000000u);
  for (;;) {
    if (sem_clockwait(sem, CLOCK_MONOTONIC, &deadline) == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

int anonauth_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  return accept4(fd, addr, len, flags);
}

int anonauth_ssl_ctx_set_min_proto(SSL_CTX *ctx, int version) {
  return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

int anonauth_ssl_ctx_set_max_proto(SSL_CTX *ctx, int version) {
  return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

long anonauth_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }

int anonauth_ssl_set_tlsext_host_name(SSL *ssl, const char *name) {
  return (int)SSL_set_tlsext_host_name(ssl, name);
}

int anonauth_ssl_ctx_set_session_cache_off(SSL_CTX *ctx) {
  return (int)SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

void anonauth_ssl_ctx_harden(SSL_CTX *ctx) {
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

/* The server's protocols in its order of preference, in ALPN wire format
   (length-prefixed names). */
typedef struct {
  unsigned char list[512];
  unsigned int len;
} alpn_want;

/* Whether the client's wire-format list `in` names `proto`; on a hit points `out` at it. */
static int alpn_offered(const unsigned char *in, unsigned int inlen, const unsigned char *proto,
                        unsigned int plen, const unsigned char **out) {
  unsigned int i = 0;
  while (i < inlen) {
    unsigned int l = in[i];
    if (i + 1 + l > inlen) return 0;
    if (l == plen && memcmp(in + i + 1, proto, l) == 0) {
      *out = in + i + 1;
      return 1;
    }
    i += 1 + l;
  }
  return 0;
}

/* The server's order decides, not the client's: the first of the server's protocols the
   client offers wins. None of them offered: no_application_protocol. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg) {
  (void)ssl;
  const alpn_want *want = (const alpn_want *)arg;
  unsigned int j = 0;
  while (j < want->len) {
    unsigned int l = want->list[j];
    if (j + 1 + l > want->len) break;
    if (alpn_offered(in, inlen, want->list + j + 1, l, out)) {
      *outlen = (unsigned char)l;
      return SSL_TLSEXT_ERR_OK;
    }
    j += 1 + l;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;  // no_application_protocol
}

static int alpn_index = -1;
static pthread_once_t alpn_once = PTHREAD_ONCE_INIT;

static void alpn_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                      void *argp) {
  (void)parent; (void)ad; (void)idx; (void)argl; (void)argp;
  free(ptr);
}

static void alpn_index_init(void) {
  alpn_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, alpn_free);
}

int anonauth_ssl_ctx_select_alpn(SSL_CTX *ctx, const unsigned char *list, unsigned int len) {
  if (len == 0 || len > sizeof(((alpn_want *)0)->list)) return 0;
  pthread_once(&alpn_once, alpn_index_init);
  alpn_want *w = malloc(sizeof *w);
  if (w == NULL) return 0;
  memcpy(w->list, list, len);
  w->len = len;
  // The context owns the copy: alpn_free releases it with the context.
  SSL_CTX_set_ex_data(ctx, alpn_index, w);
  SSL_CTX_set_alpn_select_cb(ctx, alpn_select, w);
  return 1;
}

void anonauth_ssl_get_alpn(const SSL *ssl, const unsigned char **data, unsigned int *len) {
  SSL_get0_alpn_selected(ssl, data, len);
}

int anonauth_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = events;
  ev.data.u64 = data;
  return epoll_ctl(epfd, op, fd, &ev);
}

int anonauth_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms) {
  struct epoll_event evs[256];
  if (max > 256) max = 256;
  int n = epoll_wait(epfd, evs, max, timeout_ms);
  for (int i = 0; i < n; i++) {
    events[i] = evs[i].events;
    data[i] = evs[i].data.u64;
  }
  return n;
}

EVP_PKEY *anonauth_ec_p256_keygen(void) { return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"); }

EVP_PKEY *anonauth_rsa_keygen(unsigned int bits) {
  return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
}

static EVP_PKEY *public_key_from_params(const char *type, OSSL_PARAM_BLD *bld) {
  EVP_PKEY *pkey = NULL;
  OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX *ctx = params != NULL ? EVP_PKEY_CTX_new_from_name(NULL, type, NULL) : NULL;
  if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1 ||
      EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    EVP_PKEY_free(pkey);
    pkey = NULL;
  }
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  return pkey;
}

EVP_PKEY *anonauth_rsa_public_key(const unsigned char *n, size_t n_len, const unsigned char *e,
                                  size_t e_len) {
  if (n_len == 0 || e_len == 0 || n_len > INT_MAX || e_len > INT_MAX) return NULL;
  EVP_PKEY *pkey = NULL;
  BIGNUM *bn = BN_bin2bn(n, (int)n_len, NULL);
  BIGNUM *be = BN_bin2bn(e, (int)e_len, NULL);
  OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
  if (bn != NULL && be != NULL && bld != NULL &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) == 1 &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) == 1) {
    pkey = public_key_from_params("RSA", bld);
  }
  OSSL_PARAM_BLD_free(bld);
  BN_free(bn);
  BN_free(be);
  return pkey;
}

EVP_PKEY *anonauth_ec_p256_public_key(const unsigned char *point, size_t len) {
  if (len != 65 || point[0] != 0x04) return NULL;
  EVP_PKEY *pkey = NULL;
  OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
  if (bld != NULL &&
      OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
      OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, len) == 1) {
    pkey = public_key_from_params("EC", bld);
  }
  OSSL_PARAM_BLD_free(bld);
  return pkey;
}
