#ifndef ANONAUTH_COPENSSL_SHIM_H
#define ANONAUTH_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>
#endif
