/*
 * What OpenSSL 3's shared RSA blinding costs a signature, in instructions: an RSA key's
 * own blinding belongs to the thread that signed with it first; every other thread
 * signs with the key's shared blinding, under a lock (docs/benchmarks.md, "HTTPS like
 * for like"). This signs with one key on its first thread ("own") or on a second thread
 * ("shared"), the same way the daemon signs a token (EVP_DigestSignInit, EVP_DigestSign
 * twice), and callgrind counts the instructions inside `sign`:
 *
 *   openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out /tmp/k.pem
 *   cc -O2 -o /tmp/blinding Scripts/rsa_blinding_cost.c -lcrypto -lpthread
 *   for mode in own shared; do for n in 64 320; do
 *     valgrind --tool=callgrind --toggle-collect=sign --callgrind-out-file=/tmp/cg.$mode.$n \
 *       /tmp/blinding /tmp/k.pem $mode $n
 *   done; done
 *
 * The instructions of one signature in each mode are (total at 320 - total at 64) / 256,
 * which leaves out the one-time set-up of each blinding.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static EVP_PKEY *key;
static int count;

/* `n` RS256 signatures of a 600-byte message, about a token's size. */
__attribute__((noinline)) static int sign(int n) {
  unsigned char message[600] = {0};
  unsigned char signature[1024];
  for (int i = 0; i < n; i++) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t length = sizeof signature;
    int ok = ctx != NULL && EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestSign(ctx, NULL, &length, message, sizeof message) == 1 &&
             EVP_DigestSign(ctx, signature, &length, message, sizeof message) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) return 0;
  }
  return 1;
}

static void *other_thread(void *unused) {
  (void)unused;
  return sign(count) ? (void *)1 : NULL;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[2], "own") != 0 && strcmp(argv[2], "shared") != 0)) {
    fprintf(stderr, "usage: %s KEY.pem own|shared COUNT\n", argv[0]);
    return 2;
  }
  FILE *file = fopen(argv[1], "r");
  if (file == NULL) return 1;
  key = PEM_read_PrivateKey(file, NULL, NULL, NULL);
  fclose(file);
  count = atoi(argv[3]);
  /* The main thread signs first: the key's own blinding is its. */
  if (key == NULL || count < 1 || !sign(1)) return 1;
  if (strcmp(argv[2], "own") == 0) return sign(count) ? 0 : 1;
  pthread_t thread;
  void *result = NULL;
  if (pthread_create(&thread, NULL, other_thread, NULL) != 0) return 1;
  pthread_join(thread, &result);
  return result != NULL ? 0 : 1;
}
